package hang

import (
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/taskfile"
)

// ender records the attempts it was asked to end.
type ender struct {
	mu    sync.Mutex
	hangs []executor.Hung
}

func (e *ender) Hang(_ *plan.Task, hu executor.Hung) []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hangs = append(e.hangs, hu)
	return []int{1}
}

func (e *ender) Groups(*plan.Task) []int { return nil }

// TestWatchLearnsFromItsBlock: a trial new to a block is judged by the longest gap its
// block's other trials showed; the watch ends its attempt once (not again while it is
// stopped); a trial that ended for good is judged no more.
func TestWatchLearnsFromItsBlock(t *testing.T) {
	rules := taskfile.DefaultHang()
	rules.Floor = time.Second
	faults := &plan.Faults{Hang: rules}
	old, fresh, done := &plan.Task{Name: "old", Faults: faults}, &plan.Task{Name: "new", Faults: faults}, &plan.Task{Name: "done", Faults: faults}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var now time.Time
	e := &ender{}
	w := &Watch{o: Options{Ender: e, Now: func() time.Time { return now }, Diagnose: func([]int) string { return "" }},
		trials: map[*plan.Task]*pace{}, groups: map[*plan.Faults]time.Duration{}}
	at := func(s float64, ev event.Event) {
		now = t0.Add(time.Duration(s * float64(time.Second)))
		w.Event(ev, nil)
	}
	at(0, event.Event{Kind: event.TaskStarted, Task: old, Attempt: 1})
	at(1, event.Event{Kind: event.TaskMetric, Task: old})
	at(5, event.Event{Kind: event.TaskMetric, Task: old}) // a 4 s gap: its block's pace
	at(5, event.Event{Kind: event.TaskEnded, End: event.EndFinal, Task: old})
	at(5, event.Event{Kind: event.TaskStarted, Task: done, Attempt: 1})
	at(5, event.Event{Kind: event.TaskEnded, End: event.EndFinal, Task: done})
	at(10, event.Event{Kind: event.TaskStarted, Task: fresh, Attempt: 1})
	at(11, event.Event{Kind: event.TaskProgress, Task: fresh})
	now = t0.Add(30 * time.Second) // 19 s: within 5 × 4 s
	w.judge()
	if len(e.hangs) != 0 {
		t.Fatalf("ended %v within its block's rule", e.hangs)
	}
	now = t0.Add(32 * time.Second) // 21 s
	w.judge()
	w.judge()
	if len(e.hangs) != 1 || e.hangs[0].Attempt != 1 {
		t.Fatalf("ended %v, want attempt 1 of new, once", e.hangs)
	}
}
