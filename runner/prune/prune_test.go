package prune

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// stopper records the stops asked of it.
type stopper struct {
	mu      sync.Mutex
	stopped map[string]string // task name → reason
}

func (s *stopper) Stop(t *plan.Task, status results.Status, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status != results.StatusPruned {
		panic("stopped as " + status)
	}
	if s.stopped == nil {
		s.stopped = map[string]string{}
	}
	s.stopped[t.Name] = reason
	return true
}

func (s *stopper) get() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.stopped {
		out[k] = v
	}
	return out
}

// sweep is a plan of one block of trials under asha on acc, and a second block with a rule
// of its own.
func sweep(names ...string) (*plan.Plan, []*plan.Task, *plan.Task) {
	cfg := &earlystop.Config{Method: earlystop.ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3}
	b := &plan.Task{Name: "block", Key: "blockkey", EarlyStop: cfg}
	for _, n := range names {
		b.Parallel = append(b.Parallel, &plan.Task{Name: n, Key: "key-" + n, Cmd: "true", EarlyStop: cfg})
	}
	other := &plan.Task{Name: "other", Key: "key-other", Cmd: "true", EarlyStop: &earlystop.Config{Method: earlystop.ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3}}
	b2 := &plan.Task{Name: "block2", Key: "block2key", EarlyStop: other.EarlyStop, Parallel: []*plan.Task{other}}
	return &plan.Plan{Tasks: []*plan.Task{b, b2}}, b.Parallel, other
}

// through is a stream to pr: what it sends reaches pr as a run's events do, and each line
// the pruner says reaches said.
func through(pr *Pruner, said func(event.Event)) func(event.Event) {
	var s event.Stream
	s.Add(pr)
	s.Add(event.Func(func(ev event.Event, _ func(event.Event)) {
		if ev.Kind == event.RunStatus && ev.Line != "" {
			said(ev)
		}
	}))
	return func(ev event.Event) { s.Emit(ev) }
}

func metric(t *plan.Task, name string, step int, v float64) event.Event {
	return event.Event{Kind: event.TaskMetric, Task: t, Metric: name, Step: step, Value: v}
}

func TestPrunerStopsLosers(t *testing.T) {
	p, trials, other := sweep("a", "b", "c")
	pr := New(p, Options{})
	s := &stopper{}
	pr.UseStopper(s)
	emit := func(event.Event) {}
	send := through(pr, emit)
	for _, ev := range []event.Event{
		metric(trials[0], "acc", 1, 0.9),
		metric(trials[0], "loss", 1, 0.0), // another metric: not the rule's
		metric(other, "acc", 1, 0.95),     // another block: its own rule
		metric(trials[1], "acc", 1, 0.5),  // below a: stopped
		metric(trials[2], "acc", 2, 0.1),  // no rung at step 2
		metric(trials[2], "acc", 1, 0.91), // best so far: continues
	} {
		send(ev)
	}
	eventually.Within(t, 10*time.Second, "b to be stopped", func() bool { return s.get()["b"] != "" })
	send(event.Event{Kind: event.RunEnded})
	pr.Close()
	got := s.get()
	if len(got) != 1 || !strings.Contains(got["b"], "asha: acc 0.5 at step 1 is not in the top 1/3 of the 2 values") {
		t.Errorf("stopped %v, want only b", got)
	}
	pr.Event(metric(trials[2], "acc", 3, 0), emit) // after the run: dropped, no panic
}

// failingStore is a rung store that cannot be read.
type failingStore struct{}

func (failingStore) Rung(int) (map[string]float64, error) { return nil, errors.New("access denied") }
func (failingStore) Put(int, string, float64) error       { return nil }

// TestPrunerStoreFails: a rung that cannot be read is told as a status line with a later
// event, and the trial runs on.
func TestPrunerStoreFails(t *testing.T) {
	p, trials, _ := sweep("a")
	pr := New(p, Options{Store: func(*plan.Task, func(string)) (earlystop.Store, error) { return failingStore{}, nil }})
	s := &stopper{}
	pr.UseStopper(s)
	var mu sync.Mutex
	var lines []string
	emit := func(ev event.Event) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, ev.Line)
	}
	send := through(pr, emit)
	send(metric(trials[0], "acc", 1, 0.5))
	eventually.Within(t, 10*time.Second, "the warning", func() bool {
		send(event.Event{Kind: event.RunStatus})
		mu.Lock()
		defer mu.Unlock()
		return len(lines) > 0
	})
	pr.Close()
	if !strings.Contains(lines[0], "a: early-stop: read rung 1: access denied: it runs on") || len(s.get()) != 0 {
		t.Errorf("lines %q, stopped %v", lines, s.get())
	}
}

func TestNoEarlyStopNoPruner(t *testing.T) {
	if New(&plan.Plan{Tasks: []*plan.Task{{Name: "b", Parallel: []*plan.Task{{Name: "t"}}}}}, Options{}) != nil {
		t.Error("a pruner for a plan without early-stop")
	}
}

// slowStore is a store whose writes take a while, or never end (block).
type slowStore struct {
	earlystop.MemoryStore
	delay time.Duration
	block chan struct{}
	mu    sync.Mutex
	puts  int
}

func (s *slowStore) Put(step int, trial string, v float64) error {
	if s.block != nil {
		<-s.block
	}
	time.Sleep(s.delay)
	s.mu.Lock()
	s.puts++
	s.mu.Unlock()
	return s.MemoryStore.Put(step, trial, v)
}

// TestRunEndWritesQueuedValues: the run's end waits for the values still queued to be
// written (the process exits after it: the other runalls of the sweep would never see
// them); a store that does not answer holds the end up only as long as Drain, with a warning.
func TestRunEndWritesQueuedValues(t *testing.T) {
	p, trials, _ := sweep("a", "b")
	st := &slowStore{delay: 5 * time.Millisecond}
	pr := New(p, Options{Store: func(*plan.Task, func(string)) (earlystop.Store, error) { return st, nil }})
	pr.UseStopper(&stopper{})
	send := through(pr, func(event.Event) {})
	for step := range 9 { // rungs at 1, 3 and 9
		for _, tr := range trials {
			send(metric(tr, "acc", step+1, 0.5))
		}
	}
	send(event.Event{Kind: event.RunEnded})
	st.mu.Lock()
	puts := st.puts
	st.mu.Unlock()
	if puts != 6 {
		t.Errorf("%d rung values written when the run's end returned, want 6", puts)
	}

	stuck := &slowStore{block: make(chan struct{})}
	defer close(stuck.block)
	pr = New(p, Options{Store: func(*plan.Task, func(string)) (earlystop.Store, error) { return stuck, nil }, Drain: 10 * time.Millisecond})
	pr.UseStopper(&stopper{})
	var lines []string
	send = through(pr, func(ev event.Event) { lines = append(lines, ev.Line) })
	send(metric(trials[0], "acc", 1, 0.5))
	send(event.Event{Kind: event.RunEnded})
	if len(lines) != 1 || !strings.Contains(lines[0], "values not written after 10ms: the other runalls of the sweep will not see them") {
		t.Errorf("a store that does not answer: lines %q", lines)
	}
}

// TestStalledRuleStaysBounded: a rule whose store does not answer holds its block's values
// in a bounded inbox however many its trials report (a trial's newest value replaces its
// one still queued past the bound), and says so once it takes them.
func TestStalledRuleStaysBounded(t *testing.T) {
	p, trials, _ := sweep("a", "b", "c")
	stuck := &slowStore{block: make(chan struct{})}
	pr := New(p, Options{Store: func(*plan.Task, func(string)) (earlystop.Store, error) { return stuck, nil }})
	pr.UseStopper(&stopper{})
	var mu sync.Mutex
	var lines []string
	send := through(pr, func(ev event.Event) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, ev.Line)
	})
	const steps = 10000
	for step := 1; step <= steps; step++ {
		for _, tr := range trials {
			send(metric(tr, "acc", step, 0.5))
		}
	}
	w := pr.rules[trials[0].EarlyStop]
	if n, bound := w.inbox.Len(), 4096+len(trials); n > bound {
		t.Errorf("%d values queued for a stalled rule after %d reported, want at most %d", n, steps*len(trials), bound)
	}
	close(stuck.block)
	send(event.Event{Kind: event.RunEnded})
	mu.Lock()
	defer mu.Unlock()
	if len(lines) == 0 {
		t.Error("nothing said of the values replaced")
	}
	for _, l := range lines { // once per batch the stalled rule took
		if !strings.HasPrefix(l, "early-stop: block: ") || !strings.Contains(l, "values were replaced by their trial's newer one before the rule took them") {
			t.Errorf("said %q, want the values replaced", l)
		}
	}
}

// TestPausingBlockLeftToRounds: in a plan with a block of each kind, the values of the
// block whose rule pauses (sha: runner/rounds') made the pruner start a rule-less worker
// that said "no trial is stopped early"; they are left to runner/rounds, and the asha
// block is still decided.
func TestPausingBlockLeftToRounds(t *testing.T) {
	p, trials, _ := sweep("a", "b")
	sha := &earlystop.Config{Method: earlystop.SHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3, Max: 3}
	paused := &plan.Task{Name: "p", Key: "key-p", Cmd: "true", EarlyStop: sha}
	p.Tasks = append(p.Tasks, &plan.Task{Name: "pauses", Key: "pauseskey", EarlyStop: sha, Parallel: []*plan.Task{paused}})
	pr := New(p, Options{})
	s := &stopper{}
	pr.UseStopper(s)
	var mu sync.Mutex
	var lines []string
	send := through(pr, func(ev event.Event) { mu.Lock(); lines = append(lines, ev.Line); mu.Unlock() })
	send(metric(paused, "acc", 1, 0.1))
	send(metric(trials[0], "acc", 1, 0.9))
	send(metric(trials[1], "acc", 1, 0.5))
	eventually.Within(t, 10*time.Second, "b to be stopped", func() bool { return s.get()["b"] != "" })
	send(event.Event{Kind: event.RunEnded})
	pr.Close()
	if _, made := pr.rules[sha]; made {
		t.Error("the pruner made a worker for the sha block")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		if strings.Contains(l, "no trial is stopped early") {
			t.Errorf("said %q", l)
		}
	}
}
