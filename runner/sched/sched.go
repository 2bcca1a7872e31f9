package sched

import (
	"context"
	"fmt"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
)

// Options is what a scheduler is given: its limits and how it tells and asks the run.
type Options struct {
	Limit     int        // max-parallel-commands: at most this many trials run at once
	Resources []Resource // what a trial needs room in, asked in order

	// Run runs an admitted trial, on a goroutine of its own, and says how it ended.
	Run func(ctx context.Context, t *Trial) Outcome
	// Halted says why no trial may start any more; ok is false while they may.
	Halted func() (reason string, ok bool)
	// Emit sends the scheduler's events (TaskWaiting) on the run's stream.
	Emit func(event.Event) bool
	// Skip ends a trial that will not run (the run halted) with reason.
	Skip func(t *plan.Task, reason string)
	// Fail ends a trial that can never fit here.
	Fail func(t *plan.Task, err error)
}

// Outcome is how an admitted trial's run ended: End is the same kind its TaskEnded says.
// event.EndRequeue sends the trial back to the front of the line, Reason saying why it
// waits (it ran out of memory and goes again with a larger need); event.EndPause gives
// it back to its source, which offers it again when it is to resume (from its
// checkpoint), Reason saying why it paused; event.EndFinal ends it. event.EndNone (the
// zero Outcome) is a trial that ran no attempt: its source gave it back, or it was
// skipped. A retry never reaches the scheduler: the command retries within its run.
type Outcome struct {
	End    event.End
	Reason string
}

// Scheduler runs the trials of one source. Its loop owns the line; nothing else touches it.
type Scheduler struct {
	o       Options
	src     Source
	line    *Line[*Trial]
	running int
	told    map[*Trial]string // the waiting reason last emitted for each trial
	ended   chan ended
	wg      sync.WaitGroup
	srcDone bool // the source gives no more
}

type ended struct {
	t   *Trial
	out Outcome
}

// Run schedules src's trials until every one has run, been skipped or given back, and none
// runs any more.
func Run(ctx context.Context, src Source, o Options) {
	o.Limit = max(o.Limit, 1)
	s := &Scheduler{o: o, src: src, line: NewLine[*Trial](nil, o.Limit), told: map[*Trial]string{},
		ended: make(chan ended)}
	defer s.wg.Wait()
	for {
		if reason, halted := o.Halted(); halted {
			s.drain(reason)
		} else if s.line.Len() == 0 && !s.srcDone {
			s.fill(ctx)
		}
		changed := s.changed() // before trying, so that no change is missed
		s.admit(ctx)
		if s.running == 0 && s.line.Len() == 0 && s.finished() {
			return
		}
		s.wait(ctx, changed)
	}
}

// finished reports whether the source has nothing more for this scheduler.
func (s *Scheduler) finished() bool {
	_, halted := s.o.Halted()
	return s.srcDone || halted
}

// fill asks the source for trials to line up.
func (s *Scheduler) fill(ctx context.Context) {
	ts, more := s.src.Next(ctx, max(s.o.Limit-s.running, 1))
	for _, t := range ts {
		s.line.Push(t)
	}
	s.srcDone = !more
}

// drain skips every waiting trial: the run halted.
func (s *Scheduler) drain(reason string) {
	for _, t := range s.line.Drain() {
		delete(s.told, t)
		s.o.Skip(t.Task, reason)
	}
}

// wait blocks until a trial ends (and then takes its end), room may have opened, or the
// source may have more.
func (s *Scheduler) wait(ctx context.Context, changed []<-chan struct{}) {
	var room, more, done <-chan struct{} // nil: not waited on
	if s.line.Len() > 0 && s.running < s.o.Limit {
		stop := make(chan struct{})
		defer close(stop)
		room = anyClosed(changed, stop)
	}
	if s.line.Len() == 0 && !s.finished() {
		more = s.src.Ready()
		if s.running == 0 {
			done = ctx.Done()
		}
	}
	w, withdraws := s.src.(Withdrawer)
	if s.line.Len() > 0 && withdraws {
		more = w.Ready()
	}
	select {
	case e := <-s.ended:
		s.end(e)
	case <-room:
	case <-more:
		if s.line.Len() > 0 && withdraws {
			s.withdraw(ctx, w)
		}
	case <-done:
	}
}

// withdraw drops from the line the trials the source took back: another runall runs them.
func (s *Scheduler) withdraw(ctx context.Context, w Withdrawer) {
	for _, t := range w.Withdrawn(ctx, s.line.All()) {
		s.line.Remove(t)
		delete(s.told, t)
	}
}

// anyClosed is closed when one of cs is; nil when none can be (nil channels are left out).
// With one resource (GPU memory) it is that resource's channel itself; with more, the
// goroutines that watch them end with stop.
func anyClosed(cs []<-chan struct{}, stop <-chan struct{}) <-chan struct{} {
	var live []<-chan struct{}
	for _, c := range cs {
		if c != nil {
			live = append(live, c)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	out := make(chan struct{})
	var once sync.Once
	for _, c := range live {
		go func() {
			select {
			case <-c:
				once.Do(func() { close(out) })
			case <-out:
			case <-stop:
			}
		}()
	}
	return out
}

// end takes a trial's end: its room is given back, and a requeued trial goes first.
func (s *Scheduler) end(e ended) {
	s.running--
	s.release(e.t, len(s.o.Resources))
	switch e.out.End {
	case event.EndRequeue:
		s.o.Emit(event.Event{Kind: event.TaskWaiting, Task: e.t.Task, Reason: e.out.Reason})
		s.told[e.t] = e.out.Reason
		s.line.Front(e.t)
	case event.EndPause:
		s.srcDone = false // its source keeps the paused trial, and may offer it again: ask it
	}
}

// changed is what each resource closes when room opens.
func (s *Scheduler) changed() []<-chan struct{} {
	out := make([]<-chan struct{}, 0, len(s.o.Resources))
	for _, r := range s.o.Resources {
		out = append(out, r.Changed())
	}
	return out
}

// admit starts what fits, in the line's order, and brings up to date why the rest waits.
func (s *Scheduler) admit(ctx context.Context) {
	s.line.Admit(func(t *Trial) Tried {
		if s.running >= s.o.Limit {
			return Full
		}
		ok, reason, err := s.reserve(t)
		switch {
		case err != nil:
			delete(s.told, t)
			s.o.Fail(t.Task, err)
			return Dropped
		case !ok:
			s.tell(t, reason)
			return Waits
		}
		delete(s.told, t)
		t.PassedOver = max(t.PassedOver, s.line.PassedBy(t))
		s.start(ctx, t)
		return Started
	})
	if s.running >= s.o.Limit {
		s.tellFull()
	}
}

// reserve asks every resource for room for t; when one says wait or never, the ones
// before it are released.
func (s *Scheduler) reserve(t *Trial) (bool, string, error) {
	for i, r := range s.o.Resources {
		ok, reason, err := r.Admit(t)
		if err != nil || !ok {
			s.release(t, i)
			return false, reason, err
		}
	}
	return true, "", nil
}

// release gives back t's room in the first n resources.
func (s *Scheduler) release(t *Trial, n int) {
	for i := n - 1; i >= 0; i-- {
		s.o.Resources[i].Release(t)
	}
}

// tell emits why t waits when that changed.
func (s *Scheduler) tell(t *Trial, reason string) {
	if reason == "" || s.told[t] == reason {
		return
	}
	s.told[t] = reason
	s.o.Emit(event.Event{Kind: event.TaskWaiting, Task: t.Task, Reason: reason})
}

// tellFull says, of each trial that was told a reason to wait, that what holds it now is
// the limit: a reason from before (GPU memory, say) would be stale.
func (s *Scheduler) tellFull() {
	if len(s.told) == 0 {
		return // no waiting trial was told a reason (the line is not copied at every admission)
	}
	reason := fmt.Sprintf("%d running, as many as max-parallel-commands allows", s.running)
	for _, t := range s.line.All() {
		if _, waited := s.told[t]; waited {
			s.tell(t, reason)
		}
	}
}

// start runs an admitted trial on a goroutine of its own.
func (s *Scheduler) start(ctx context.Context, t *Trial) {
	t.Attempt++
	s.running++
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var out Outcome
		if s.src.Start(ctx, t) {
			out = s.o.Run(ctx, t)
			if out.End != event.EndRequeue {
				s.src.Ended(ctx, t, out)
			}
		}
		s.ended <- ended{t, out}
	}()
}
