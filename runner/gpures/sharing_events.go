package gpures

import (
	"slices"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sharing"
)

// Event measures each shared trial's rate from its progress, and resumes a trial it paused
// once the pause is over: it never waits, and acts on the controller's decisions.
func (s *gpuSharing) Event(ev event.Event, emit func(event.Event)) {
	switch {
	case ev.Kind == event.TaskProgress && ev.Progress != nil:
		s.progress(ev.Task, *ev.Progress, emit)
	case ev.Kind == event.TaskEnded:
		if ev.Detail != nil && ev.Detail.Progress != nil {
			s.progress(ev.Task, *ev.Detail.Progress, emit) // where it stopped: its steps
		}
		if ev.End == event.EndPause {
			s.resumePaused(ev.Task)
		}
	}
}

// sampled tells the controller what a sample of the GPUs says: each device's model (NVML's
// name: GPUs of one model learn together), and each shared trial's share of its device's
// time, where the driver reports it per process.
func (s *gpuSharing) sampled(smp admit.Sample) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for i, d := range smp.Devices {
		s.ctl.Model(gpuName(i), d.Name)
		s.models.of[gpuName(i)] = d.Name
	}
	for _, b := range smp.Busy {
		for _, st := range s.trials {
			if st.task.ID == b.ID && slices.Contains(st.devs, gpuName(b.Device)) {
				s.ctl.Busy(now, gpuName(b.Device), st.task.Name, b.Share)
				break
			}
		}
	}
}

// resumePaused puts a trial this paused back in line, once its pause is back in its
// source: it waits there for a GPU that takes it.
func (s *gpuSharing) resumePaused(t *plan.Task) {
	s.mu.Lock()
	if st := s.trials[t]; st != nil {
		t = st.task
	}
	asked := s.paused[t]
	delete(s.paused, t)
	s.mu.Unlock()
	if asked {
		s.pause.ResumeWhenBack(t)
	}
}

// progress reads a shared trial's steps at now: its steps so far, and a rate once its
// window is long enough.
func (s *gpuSharing) progress(t *plan.Task, p results.Progress, emit func(event.Event)) {
	s.mu.Lock()
	st := s.trials[t]
	if st == nil {
		s.mu.Unlock()
		return
	}
	now, iter := s.now(), p.Iter
	w := &st.win
	if !w.set || iter < w.iter { // a fresh window, or the bar started over (a resume, a new epoch's bar)
		w.at, w.iter, w.set = now, iter, true
	}
	r := sharing.Rate{Trial: st.task.Name, Since: w.at, Steps: iter, From: w.iter, Total: p.Of} // no rate: its steps alone
	if s.clock.window.closes(*w, now, iter) {
		r.PerSecond = (iter - w.iter) / (now - w.at).Seconds()
		w.at, w.iter = now, iter
	}
	var decs []sharing.Decision
	for _, d := range st.devs {
		decs = append(decs, s.ctl.Measured(now, d, r)...)
	}
	for _, d := range decs {
		s.said = append(s.said, results.SharingDecision{At: d.At.Seconds(), GPU: d.GPU, Action: d.Action.String(), Trials: d.Trials, Line: d.String()})
		if d.Action == sharing.Alone {
			s.models.aloneOn[d.Trial] = s.models.of[d.GPU]
		}
	}
	s.mu.Unlock()
	for _, d := range decs {
		s.act(d, emit)
	}
	if opens(decs) && s.wake != nil {
		s.wake() // the waiting trials ask the gate now, not at the GPUs' next measurement
	}
}

// opens reports whether a decision of decs may let a waiting trial in: a trial measured
// alone, or a mix that gained.
func opens(decs []sharing.Decision) bool {
	return slices.ContainsFunc(decs, func(d sharing.Decision) bool { return d.Action == sharing.Alone || d.Action == sharing.Open })
}

// act says decision d, and has the GPU room of the trial a Lower names ask for its pause at
// its next copy. With no copy within its wait it is paused all the same, at the copy it
// last kept (or from its start): the GPU it slowed is to take one fewer.
func (s *gpuSharing) act(d sharing.Decision, emit func(event.Event)) {
	emit(event.Event{Kind: event.RunStatus, Line: "gpu-sharing: " + d.String()})
	if d.Action != sharing.Lower || !d.Pause || s.pause == nil {
		return
	}
	s.mu.Lock()
	t := s.named[d.Trial]
	var room *GPURoom
	if st := s.trials[t]; st != nil {
		room = s.rooms.Get(st.tr)
	}
	if t != nil {
		s.paused[t] = true
	}
	s.mu.Unlock()
	if t == nil {
		return
	}
	if room == nil || !room.Pause("gpu-sharing: it lowered its GPU's throughput") {
		s.mu.Lock()
		delete(s.paused, t)
		s.mu.Unlock()
	}
}

// results are what the controller measured and decided up to end (seconds since the run
// began); nil without gpu-sharing: progress.
func (s *gpuSharing) results() *results.Sharing {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	end := s.now()
	f := s.ctl.Figures()
	out := sharingRecord(f)
	out.Decisions, out.Summary = append([]results.SharingDecision(nil), s.said...), f.Summary(end)
	out.Speedup, _ = f.Speedup(end)
	return out
}

// remember keeps in the history each trial's rate measured alone, by its task key and the
// model of the GPU it was measured on, for the next run of the same task on that model.
func (s *gpuSharing) remember() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.ctl.Figures().Trials {
		if t := s.named[f.Trial]; t != nil && f.AloneFrom == sharing.FromMeasured {
			s.hist.SetRateAlone(t.Key, t.Name, s.models.aloneOn[f.Trial], f.Alone)
		}
	}
}
