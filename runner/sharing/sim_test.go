package sharing

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A small model of GPUs for the tests: trials of a few kinds, each a rate alone and a share
// of its step the GPU computes (busy); a world that turns the trials on a GPU into their
// rates; and a loop that admits, advances, reports rates and pauses at copies, as the run
// will once the controller is wired. The controller sees only the reported rates.

// kind is a class of trial.
type kind struct {
	name     string
	busy     float64 // share of a step alone the GPU computes
	cpu      float64 // host cores its input pipeline keeps busy alone (cpuCap's world)
	alone    float64 // steps per second alone
	steps    float64 // steps to its end
	mem      int     // GiB
	canPause bool
}

var (
	light  = &kind{name: "light", busy: 0.2, cpu: 1, alone: 10, steps: 300, mem: 4, canPause: true}
	medium = &kind{name: "medium", busy: 0.5, cpu: 0.5, alone: 5, steps: 200, mem: 6, canPause: true}
	heavy  = &kind{name: "heavy", busy: 1.0, cpu: 0.2, alone: 2, steps: 100, mem: 10, canPause: true}
)

// world turns the kinds on one GPU into each one's rate.
type world interface{ rates(ks []*kind) []float64 }

// timeSlice is time-slicing without MPS: while the busy shares, each raised by a switching
// cost per extra process, add up to more than 1, every step stretches in proportion.
type timeSlice struct{ switchCost float64 }

func (w timeSlice) stretch(ks []*kind) float64 {
	load := 0.0
	for _, k := range ks {
		load += k.busy
	}
	return max(1, load*(1+w.switchCost*float64(len(ks)-1)))
}

func (w timeSlice) rates(ks []*kind) []float64 {
	f := w.stretch(ks)
	out := make([]float64, len(ks))
	for i, k := range ks {
		out[i] = k.alone / f
	}
	return out
}

// cpuCap adds what timeSlice does not have: the trials' input pipelines share a few host
// cores, with a cost per extra process; past the cores every step stretches too.
type cpuCap struct {
	timeSlice
	cores, perProc float64
}

func (w cpuCap) rates(ks []*kind) []float64 {
	load := 0.0
	for _, k := range ks {
		load += k.cpu
	}
	f := max(w.stretch(ks), load*(1+w.perProc*float64(len(ks)-1))/w.cores)
	out := make([]float64, len(ks))
	for i, k := range ks {
		out[i] = k.alone / f
	}
	return out
}

// policy is what packs trials: the controller, or memory alone, or one at a time.
type policy interface {
	mayAdmit(now time.Duration, gpu string, t *simTrial) bool
	started(now time.Duration, gpu string, t *simTrial)
	left(now time.Duration, gpu string, t *simTrial)
	measured(now time.Duration, gpu string, t *simTrial, r Rate) []Decision
	// utilised is told each trial's share of its GPU's time before its rate, as NVML's
	// per-process utilisation reports it: its GPU time per step over its step shared.
	utilised(now time.Duration, gpu string, t *simTrial, share float64)
}

type simTrial struct {
	id         string
	k          *kind
	done       float64
	placed     time.Duration // when it last started
	pause      bool          // pause at its next copy
	winStart   time.Duration // its rate window
	winDone    float64
	lastReport time.Duration
	lastUtil   time.Duration // its share of the GPU's time last reported
}

func (t *simTrial) trial() Trial {
	return Trial{ID: t.id, Kind: t.k.name, CanPause: t.k.canPause}
}

// sim is one simulated sweep.
type sim struct {
	w          world
	p          policy
	gpus       [][]*simTrial
	memGiB     int
	queue      []*simTrial
	report     time.Duration // how often each trial's rate is reported
	copyEvery  time.Duration // checkpoint interval
	now        time.Duration
	left       int
	undo       []time.Duration // for each Lower with a pause: from the admission it undid to the pause
	admittedAt map[string]time.Duration
	counts     map[int]time.Duration // time spent with n trials on a GPU while trials waited
}

const dt = 100 * time.Millisecond

// utilEvery is how often each trial's share of its GPU's time is reported: as the run
// samples the GPUs, more often than rates are measured.
const utilEvery = 500 * time.Millisecond

func newSim(w world, p policy, gpus, memGiB int, trials []*kind) *sim {
	s := &sim{w: w, p: p, gpus: make([][]*simTrial, gpus), memGiB: memGiB, report: 2 * time.Second,
		copyEvery: 10 * time.Second, admittedAt: map[string]time.Duration{}, counts: map[int]time.Duration{}}
	for i, k := range trials {
		s.queue = append(s.queue, &simTrial{id: fmt.Sprintf("%s-%02d", k.name, i), k: k})
	}
	s.left = len(trials)
	return s
}

func gpuName(g int) string { return fmt.Sprint(g) }

// run plays the sweep to its end and returns its makespan.
func (s *sim) run(t *testing.T) time.Duration {
	t.Helper()
	for s.left > 0 {
		if s.now > 4*time.Hour {
			t.Fatalf("the sweep never ended: %d trials left, %d waiting", s.left, len(s.queue))
		}
		s.admit()
		for g := range s.gpus {
			s.advance(g)
		}
		s.now += dt
	}
	return s.now
}

// admit places, on each GPU, the first waiting trials that fit its memory and the policy.
func (s *sim) admit() {
	for g := range s.gpus {
		for {
			i := slices.IndexFunc(s.queue, func(t *simTrial) bool {
				return s.memUsed(g)+t.k.mem <= s.memGiB && s.p.mayAdmit(s.now, gpuName(g), t)
			})
			if i < 0 {
				break
			}
			t := s.queue[i]
			s.queue = slices.Delete(s.queue, i, i+1)
			t.placed, t.pause, t.lastReport, t.lastUtil = s.now, false, s.now, s.now
			s.admittedAt[t.id] = s.now
			s.gpus[g] = append(s.gpus[g], t)
			s.mixChanged(g, s.now)
			s.p.started(s.now, gpuName(g), t)
		}
	}
}

func (s *sim) memUsed(g int) int {
	n := 0
	for _, t := range s.gpus[g] {
		n += t.k.mem
	}
	return n
}

// mixChanged starts every rate window on g anew at now.
func (s *sim) mixChanged(g int, now time.Duration) {
	for _, t := range s.gpus[g] {
		t.winStart, t.winDone = now, t.done
	}
}

// advance moves g's trials one tick: progress, ends, copies (and pauses), rate reports.
func (s *sim) advance(g int) {
	ts := s.gpus[g]
	if len(s.queue) > 0 {
		s.counts[len(ts)] += dt
	}
	ks := make([]*kind, len(ts))
	for i, t := range ts {
		ks[i] = t.k
	}
	rates := s.w.rates(ks)
	next := s.now + dt
	var gone []*simTrial
	for i, t := range ts {
		t.done += rates[i] * dt.Seconds()
		switch {
		case t.done >= t.k.steps:
			gone = append(gone, t)
			s.left--
		case t.pause && (next-t.placed)%s.copyEvery == 0:
			gone = append(gone, t)
			s.queue = append([]*simTrial{t}, s.queue...)
		case next-t.lastUtil >= utilEvery && next-t.lastReport < s.report:
			t.lastUtil = next
			s.p.utilised(next, gpuName(g), t, t.k.busy*rates[i]/t.k.alone)
		case next-t.lastReport >= s.report:
			r := Rate{Trial: t.id, PerSecond: (t.done - t.winDone) / (next - t.winStart).Seconds(), Since: t.winStart, Steps: t.done}
			t.winStart, t.winDone, t.lastReport = next, t.done, next
			s.act(next, g, s.p.measured(next, gpuName(g), t, r))
		}
	}
	for _, t := range gone {
		s.gpus[g] = slices.DeleteFunc(s.gpus[g], func(x *simTrial) bool { return x == t })
		s.p.left(next, gpuName(g), t)
		if t.pause {
			s.undo = append(s.undo, next-s.admittedAt[t.id])
		}
	}
	if len(gone) > 0 {
		s.mixChanged(g, next)
	}
}

// act marks the trial a Lower pauses.
func (s *sim) act(_ time.Duration, g int, ds []Decision) {
	for _, d := range ds {
		if d.Action != Lower || !d.Pause {
			continue
		}
		for _, t := range s.gpus[g] {
			if t.id == d.Trial {
				t.pause = true
			}
		}
	}
}

// settled is the number of trials a GPU held longest while trials waited.
func (s *sim) settled() int {
	best := 0
	for n, d := range s.counts {
		if d > s.counts[best] || (d == s.counts[best] && n > best) {
			best = n
		}
	}
	return best
}

// byProgress is the controller as the policy; util: the GPUs report each process's
// utilisation.
type byProgress struct {
	c    *Controller
	util bool
}

func (p byProgress) utilised(now time.Duration, gpu string, t *simTrial, share float64) {
	if p.util {
		p.c.Busy(now, gpu, t.id, share)
	}
}

func (p byProgress) mayAdmit(now time.Duration, gpu string, t *simTrial) bool {
	return p.c.MayAdmit(now, gpu, t.trial()).Action == Admit
}
func (p byProgress) started(now time.Duration, gpu string, t *simTrial) {
	p.c.Started(now, gpu, t.trial())
}
func (p byProgress) left(now time.Duration, gpu string, t *simTrial) { p.c.Left(now, gpu, t.id) }
func (p byProgress) measured(now time.Duration, gpu string, _ *simTrial, r Rate) []Decision {
	return p.c.Measured(now, gpu, r)
}

// byMemory packs while memory holds (most: 1 is one at a time).
type byMemory struct {
	most int
	on   map[string]int
}

func (p *byMemory) mayAdmit(_ time.Duration, gpu string, _ *simTrial) bool {
	return p.most == 0 || p.on[gpu] < p.most
}
func (p *byMemory) started(_ time.Duration, gpu string, _ *simTrial) { p.on[gpu]++ }
func (p *byMemory) left(_ time.Duration, gpu string, _ *simTrial)    { p.on[gpu]-- }
func (p *byMemory) measured(time.Duration, string, *simTrial, Rate) []Decision {
	return nil
}
func (p *byMemory) utilised(time.Duration, string, *simTrial, float64) {}
