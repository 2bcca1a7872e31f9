package event

import (
	"slices"
	"testing"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// kinds records what a consumer was told, and reacts to a task's final end with a line.
type kinds struct {
	react bool
	got   []string
}

func (k *kinds) Event(ev Event, emit func(Event)) {
	k.got = append(k.got, ev.Kind.String())
	if k.react && ev.Kind == TaskEnded && ev.End == EndFinal {
		emit(Event{Kind: RunStatus, Line: "reacted"})
	}
}

// Each task ends once: a skip after a start and a second final end are dropped; a requeued
// task may be skipped again; what a consumer emits in reaction reaches every consumer, after
// the event it reacted to.
func TestStreamLifecycle(t *testing.T) {
	a, b := &kinds{react: true}, &kinds{}
	s := &Stream{}
	s.Add(a)
	s.Add(b)
	t1, t2 := &plan.Task{ID: 1}, &plan.Task{ID: 2}
	sent := []bool{
		s.Emit(Event{Kind: TaskStarted, Task: t1}),
		s.Emit(Event{Kind: TaskSkipped, Task: t1}), // started: dropped
		s.Emit(Event{Kind: TaskEnded, Task: t1, End: EndFinal, Status: results.StatusOK}),
		s.Emit(Event{Kind: TaskEnded, Task: t1, End: EndFinal}), // twice: dropped
		s.Emit(Event{Kind: TaskStarted, Task: t2}),
		s.Emit(Event{Kind: TaskEnded, Task: t2, End: EndRequeue}),
		s.Emit(Event{Kind: TaskSkipped, Task: t2}), // requeued, then the run halted
	}
	if want := []bool{true, false, true, false, true, true, true}; !slices.Equal(sent, want) {
		t.Errorf("sent %v, want %v", sent, want)
	}
	want := []string{"start", "end", "status", "start", "end", "skipped"}
	if !slices.Equal(a.got, want) || !slices.Equal(b.got, want) {
		t.Errorf("consumers told %q and %q, want %q each", a.got, b.got, want)
	}
}

// teller says a line of its own as it takes a task's final end, as a goroutine of its would.
type teller struct {
	kinds
	notes Notes
}

func (t *teller) Notes() *Notes { return &t.notes }

func (t *teller) Event(ev Event, emit func(Event)) {
	t.kinds.Event(ev, emit)
	if ev.Kind == TaskEnded && ev.End == EndFinal {
		t.notes.Say("said")
	}
}

// What a Teller says reaches every consumer as a status line: after the event it reacted
// to, or at once when said from elsewhere between events (not held for the next event);
// nothing after the run's last event.
func TestStreamTellsNotes(t *testing.T) {
	a, b := &teller{}, &kinds{}
	s := &Stream{}
	s.Add(a)
	s.Add(b)
	t1 := &plan.Task{ID: 1}
	s.Emit(Event{Kind: TaskStarted, Task: t1})
	a.notes.Say("from its goroutine")
	told := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(b.got)
	}
	for deadline := time.Now().Add(10 * time.Second); told() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	s.Emit(Event{Kind: TaskOutput, Task: t1})
	s.Emit(Event{Kind: TaskEnded, Task: t1, End: EndFinal})
	s.Emit(Event{Kind: RunEnded})
	a.notes.Say("after the end")
	time.Sleep(50 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	want := []string{"start", "status", "output", "end", "status", "run-end"}
	if !slices.Equal(a.got, want) || !slices.Equal(b.got, want) {
		t.Errorf("consumers told %q and %q, want %q each", a.got, b.got, want)
	}
}
