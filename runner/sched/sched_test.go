package sched

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
)

func tasks(n int) []*plan.Task {
	var ts []*plan.Task
	for i := range n {
		ts = append(ts, &plan.Task{ID: i + 1, Name: fmt.Sprintf("t%d", i+1)})
	}
	return ts
}

// slots is a resource of n units, each trial taking one; it says why a trial waits.
type slots struct {
	mu      sync.Mutex
	free    int
	never   string // a task that never fits
	changed chan struct{}
}

func (s *slots) Admit(t *Trial) (bool, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Task.Name == s.never {
		return false, "", errors.New("never fits")
	}
	if s.free == 0 {
		return false, "no unit free", nil
	}
	s.free--
	return true, "", nil
}

func (s *slots) Release(*Trial) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free++
}

func (s *slots) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// recorder is the run's side of a scheduler in tests.
type recorder struct {
	mu       sync.Mutex
	started  []string
	events   []event.Event
	skipped  []string
	failed   []string
	running  int
	most     int
	release  chan struct{} // when set, trials wait on it
	requeue  map[string]int
	attempts map[string]int
}

func (r *recorder) options(limit int, res ...Resource) Options {
	return Options{
		Limit: limit, Resources: res,
		Run: func(_ context.Context, t *Trial) Outcome {
			r.mu.Lock()
			r.started = append(r.started, t.Task.Name)
			r.running++
			r.most = max(r.most, r.running)
			r.attempts[t.Task.Name] = t.Attempt
			end := event.EndFinal
			if r.requeue[t.Task.Name] > 0 {
				r.requeue[t.Task.Name]--
				end = event.EndRequeue
			}
			r.mu.Unlock()
			if r.release != nil {
				<-r.release
			}
			r.mu.Lock()
			r.running--
			r.mu.Unlock()
			return Outcome{End: end, Reason: "requeued"}
		},
		Halted: func() (string, bool) { return "", false },
		Emit: func(ev event.Event) bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.events = append(r.events, ev)
			return true
		},
		Skip: func(t *plan.Task, _ string) { r.skipped = append(r.skipped, t.Name) },
		Fail: func(t *plan.Task, _ error) { r.failed = append(r.failed, t.Name) },
	}
}

func newRecorder() *recorder { return &recorder{requeue: map[string]int{}, attempts: map[string]int{}} }

func TestLimitAndOrder(t *testing.T) {
	r := newRecorder()
	Run(context.Background(), NewList(tasks(6)), r.options(2))
	if want := []string{"t1", "t2", "t3", "t4", "t5", "t6"}; len(r.started) != 6 || r.most > 2 {
		t.Errorf("started %q, at most %d at once; want all of %q, 2 at once", r.started, r.most, want)
	}
}

// A trial that runs out of room goes back to the front of the line and runs again, its
// attempt counted.
func TestRequeueGoesFirst(t *testing.T) {
	r := newRecorder()
	r.requeue["t1"] = 1
	Run(context.Background(), NewList(tasks(3)), r.options(1))
	if want := []string{"t1", "t1", "t2", "t3"}; !slices.Equal(r.started, want) {
		t.Errorf("started %q, want %q", r.started, want)
	}
	if r.attempts["t1"] != 2 {
		t.Errorf("t1 attempt %d, want 2", r.attempts["t1"])
	}
}

// A trial that can never fit fails; the rest run.
func TestNeverFitsFails(t *testing.T) {
	r := newRecorder()
	Run(context.Background(), NewList(tasks(3)), r.options(4, &slots{free: 4, never: "t2"}))
	if !slices.Equal(r.failed, []string{"t2"}) || len(r.started) != 2 {
		t.Errorf("failed %q, started %q; want t2 failed, the others run", r.failed, r.started)
	}
}

// A trial told it waits for a resource is told again when what holds it is the limit, so
// that its reason is never stale.
func TestWaitingReasonFollowsTheLimit(t *testing.T) {
	r := newRecorder()
	r.release = make(chan struct{})
	res := &slots{free: 1, changed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), NewList(tasks(3)), r.options(2, res))
	}()
	waitFor(t, r, func() bool { return len(r.events) >= 2 }) // t2 and t3 wait for a unit
	res.mu.Lock()
	res.free++ // room for one more: t2 starts, and the limit holds t3
	close(res.changed)
	res.changed = make(chan struct{})
	res.mu.Unlock()
	waitFor(t, r, func() bool { return len(r.started) == 2 })
	waitFor(t, r, func() bool { return reasonOf(r, "t3") != "no unit free" })
	r.mu.Lock()
	got := reasonOf(r, "t3")
	r.mu.Unlock()
	if got != "2 running, as many as max-parallel-commands allows" {
		t.Errorf("t3 waits for %q, want the limit", got)
	}
	close(r.release)
	<-done
}

// reasonOf is the last reason name was told to wait for; r.mu is held.
func reasonOf(r *recorder, name string) string {
	reason := ""
	for _, ev := range r.events {
		if ev.Kind == event.TaskWaiting && ev.Task.Name == name {
			reason = ev.Reason
		}
	}
	return reason
}

func waitFor(t *testing.T, r *recorder, cond func() bool) {
	t.Helper()
	for range 1000 {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		sleep()
	}
	t.Fatal("timed out")
}

// givesBack is a source whose first trial another runall holds.
type givesBack struct{ *List }

func (g givesBack) Start(_ context.Context, t *Trial) bool { return t.Task.Name != "t1" }

func TestSourceGivesBack(t *testing.T) {
	r := newRecorder()
	Run(context.Background(), givesBack{NewList(tasks(3))}, r.options(2))
	if want := []string{"t2", "t3"}; !slices.Equal(r.started, want) && !slices.Equal(r.started, []string{"t3", "t2"}) {
		t.Errorf("started %q, want %q", r.started, want)
	}
}

// A halted run skips what waits, and the scheduler returns once what runs has ended.
func TestHaltedSkips(t *testing.T) {
	r := newRecorder()
	o := r.options(1)
	var halted atomic.Bool
	run := o.Run
	o.Run = func(ctx context.Context, t *Trial) Outcome { halted.Store(true); return run(ctx, t) }
	o.Halted = func() (string, bool) { return "halted", halted.Load() }
	Run(context.Background(), NewList(tasks(3)), o)
	if !slices.Equal(r.started, []string{"t1"}) || !slices.Equal(r.skipped, []string{"t2", "t3"}) {
		t.Errorf("started %q, skipped %q; want t1 run, t2 and t3 skipped", r.started, r.skipped)
	}
}

func sleep() { time.Sleep(5 * time.Millisecond) }

// With two resources, room opening in either wakes the line.
func TestTwoResources(t *testing.T) {
	r := newRecorder()
	a := &slots{free: 1, changed: make(chan struct{})}
	b := &slots{free: 2, changed: make(chan struct{})}
	r.release = make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), NewList(tasks(2)), r.options(4, a, b))
	}()
	waitFor(t, r, func() bool { return len(r.started) == 1 && reasonOf(r, "t2") == "no unit free" })
	a.mu.Lock()
	a.free++
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
	waitFor(t, r, func() bool { return len(r.started) == 2 })
	close(r.release)
	<-done
	if b.free != 2 || a.free != 2 {
		t.Errorf("free after the run: %d and %d, want all given back", a.free, b.free)
	}
}

// resumes is a source that pauses t1 once and offers it again after t2 and t3 ran: what a
// rule that pauses trials at a rung does.
type resumes struct {
	mu     sync.Mutex
	trials []*Trial
	paused *Trial
	ended  int
	ready  chan struct{}
}

func (s *resumes) Next(context.Context, int) ([]*Trial, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.trials
	s.trials = nil
	if s.paused != nil && s.ended == 2 {
		out, s.paused = append(out, s.paused), nil
	}
	return out, s.ended < 3
}

func (s *resumes) Ready() <-chan struct{} { return s.ready }
func (s *resumes) Start(context.Context, *Trial) bool {
	return true
}

func (s *resumes) Ended(_ context.Context, t *Trial, out Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if out.End == event.EndPause {
		s.paused = t
	} else {
		s.ended++
	}
	if s.ended == 2 && s.paused != nil {
		close(s.ready)
	}
}

// A paused trial leaves the scheduler, its room released at once for the next trial, and
// runs again, as the same trial, when its source offers it again.
func TestPauseGivesTheTrialBackToItsSource(t *testing.T) {
	r := newRecorder()
	src := &resumes{ready: make(chan struct{})}
	for _, tk := range tasks(3) {
		src.trials = append(src.trials, &Trial{Task: tk})
	}
	o := r.options(1, &slots{free: 1})
	run := o.Run
	paused := false
	o.Run = func(ctx context.Context, t *Trial) Outcome {
		out := run(ctx, t)
		if t.Task.Name == "t1" && !paused {
			paused = true
			return Outcome{End: event.EndPause, Reason: "at its rung"}
		}
		return out
	}
	Run(context.Background(), src, o)
	if want := []string{"t1", "t2", "t3", "t1"}; !slices.Equal(r.started, want) {
		t.Errorf("started %q, want %q", r.started, want)
	}
	if r.attempts["t1"] != 2 {
		t.Errorf("t1 attempt %d, want 2", r.attempts["t1"])
	}
}

// list is a source that said it had nothing more before its trial paused, as a fixed list
// does, then offers the paused trial again once told to.
type list struct {
	mu     sync.Mutex
	trials []*Trial
	paused *Trial
	ready  chan struct{}
}

func (s *list) Next(context.Context, int) ([]*Trial, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.trials
	s.trials = nil
	if s.paused != nil {
		return out, true
	}
	return out, false
}

func (s *list) Ready() <-chan struct{}             { return s.ready }
func (s *list) Start(context.Context, *Trial) bool { return true }
func (s *list) Ended(_ context.Context, t *Trial, out Outcome) {
	if out.End == event.EndPause {
		s.mu.Lock()
		s.paused = t
		s.mu.Unlock()
		go func() { // resumed later, by whoever paused it
			s.mu.Lock()
			s.trials, s.paused = []*Trial{t}, nil
			s.mu.Unlock()
			close(s.ready)
		}()
	}
}

// TestPauseAsksTheSourceAgain: a source that had given every trial and said so is asked
// again once a trial pauses, so that it can offer the trial again.
func TestPauseAsksTheSourceAgain(t *testing.T) {
	r := newRecorder()
	src := &list{trials: []*Trial{{Task: tasks(1)[0]}}, ready: make(chan struct{})}
	o := r.options(1, &slots{free: 1})
	run := o.Run
	o.Run = func(ctx context.Context, t *Trial) Outcome {
		out := run(ctx, t)
		if t.Attempt == 1 {
			return Outcome{End: event.EndPause, Reason: "at its rung"}
		}
		return out
	}
	Run(context.Background(), src, o)
	if want := []string{"t1", "t1"}; !slices.Equal(r.started, want) {
		t.Errorf("started %q, want %q", r.started, want)
	}
}

// taken is a source of one trial that another runall takes while it waits here: Ready
// says so after a while, and Withdrawn gives it back.
type taken struct {
	*List
	asked atomic.Int32
}

func (s *taken) Ready() <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(10*time.Millisecond, func() { close(ch) })
	return ch
}

func (s *taken) Withdrawn(_ context.Context, waiting []*Trial) []*Trial {
	if s.asked.Add(1) < 3 {
		return nil // not taken yet
	}
	return waiting
}

// TestWithdrawnLeavesTheLine: a trial that waits for room that never opens leaves the line
// once its source takes it back (another runall ran it), and the scheduler ends without
// running, skipping or failing it.
func TestWithdrawnLeavesTheLine(t *testing.T) {
	r := newRecorder()
	src := &taken{List: NewList(tasks(1))}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), src, r.options(1, &slots{free: 0, changed: make(chan struct{})}))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the scheduler still waits for room for a trial its source took back")
	}
	if len(r.started)+len(r.skipped)+len(r.failed) > 0 || src.asked.Load() < 3 {
		t.Errorf("started %q, skipped %q, failed %q, asked %d times; want it withdrawn, untouched, at the third ask",
			r.started, r.skipped, r.failed, src.asked.Load())
	}
}
