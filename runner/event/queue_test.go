package event

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// brief names an event for comparing what a queue kept: "output a1", "waiting t1 gpu",
// "start t1".
func brief(ev Event) string {
	s := ev.Kind.String()
	if ev.Task != nil {
		s += " " + ev.Task.Name
	}
	if v := ev.Line + ev.Reason; v != "" {
		s += " " + v
	}
	return s
}

// A Queue never refuses an event it can keep and never holds more output lines than its
// limits: lines beyond them are dropped and counted, the newest waiting reason or memory
// reading or progress of a task replaces the one queued, and a task's lifecycle and the run's status
// lines are kept whatever the count, in the order they came.
func TestQueueBoundsWhatItHolds(t *testing.T) {
	t1, t2 := &plan.Task{Name: "t1"}, &plan.Task{Name: "t2"}
	line := func(task *plan.Task, s string) Event { return Event{Kind: TaskOutput, Task: task, Line: s} }
	wait := func(task *plan.Task, s string) Event { return Event{Kind: TaskWaiting, Task: task, Reason: s} }
	mem := func(task *plan.Task, s string) Event { return Event{Kind: TaskMemory, Task: task, Line: s} }
	prog := func(task *plan.Task, s string) Event { return Event{Kind: TaskProgress, Task: task, Line: s} }
	start := Event{Kind: TaskStarted, Task: t1}
	status := Event{Kind: RunStatus, Line: "note"}
	for _, tc := range []struct {
		name        string
		limits      QueueLimits
		in          []Event
		want        []string
		wantSkipped int
	}{
		{"under its limits: everything, in order", QueueLimits{Lines: 3, Bytes: 100},
			[]Event{line(t1, "a"), wait(t2, "gpu"), line(t1, "b"), start},
			[]string{"output t1 a", "waiting t2 gpu", "output t1 b", "start t1"}, 0},
		{"lines over the count are dropped and counted", QueueLimits{Lines: 2, Bytes: 100},
			[]Event{line(t1, "a"), line(t1, "b"), line(t1, "c"), start, line(t2, "d"), status},
			[]string{"output t1 a", "output t1 b", "start t1", "status note"}, 2},
		{"lines over the bytes are dropped and counted", QueueLimits{Lines: 100, Bytes: 4},
			[]Event{line(t1, "abc"), line(t1, "de"), line(t1, "f")},
			[]string{"output t1 abc", "output t1 de"}, 1},
		{"full: the newest reason and reading of a task replace the queued ones", QueueLimits{Lines: 1, Bytes: 100},
			[]Event{line(t1, "a"), wait(t1, "gpu 1"), mem(t2, "1G"), wait(t2, "host"), wait(t1, "gpu 2"), mem(t2, "2G")},
			[]string{"output t1 a", "waiting t1 gpu 2", "memory t2 2G", "waiting t2 host"}, 0},
		{"full: the newest progress of a task replaces the queued one", QueueLimits{Lines: 1, Bytes: 100},
			[]Event{line(t1, "a"), prog(t1, "1/9"), prog(t2, "5/9"), prog(t1, "2/9")},
			[]string{"output t1 a", "progress t1 2/9", "progress t2 5/9"}, 0},
		{"full: a reason after its task's start stays after it", QueueLimits{Lines: 1, Bytes: 100},
			[]Event{line(t1, "a"), wait(t1, "gpu 1"), start, wait(t1, "gpu 2")},
			[]string{"output t1 a", "waiting t1 gpu 1", "start t1", "waiting t1 gpu 2"}, 0},
	} {
		q := NewQueue(tc.limits)
		for _, ev := range tc.in {
			q.Event(ev, nil)
		}
		evs, skipped, last := q.Take()
		var got []string
		for _, ev := range evs {
			got = append(got, brief(ev))
		}
		if !slices.Equal(got, tc.want) || skipped != tc.wantSkipped || last {
			t.Errorf("%s: took %q, %d skipped, last %v; want %q, %d skipped", tc.name, got, skipped, last, tc.want, tc.wantSkipped)
		}
	}
}

// Take empties the queue and its counts, so that a reader that catches up is given every
// line again; after Close, the last events are taken with last set and nothing more is
// queued.
func TestQueueTakeAndClose(t *testing.T) {
	task := &plan.Task{Name: "t"}
	q := NewQueue(QueueLimits{Lines: 2, Bytes: 1 << 10})
	for i := range 5 {
		q.Event(Event{Kind: TaskOutput, Task: task, Line: fmt.Sprint(i)}, nil)
	}
	<-q.Ready()
	if evs, skipped, last := q.Take(); len(evs) != 2 || skipped != 3 || last {
		t.Fatalf("first take: %d events, %d skipped, last %v; want 2, 3, false", len(evs), skipped, last)
	}
	q.Event(Event{Kind: TaskOutput, Task: task, Line: "again"}, nil)
	q.Close()
	q.Event(Event{Kind: TaskOutput, Task: task, Line: "after close"}, nil)
	<-q.Ready()
	evs, skipped, last := q.Take()
	if len(evs) != 1 || evs[0].Line != "again" || skipped != 0 || !last {
		t.Errorf("take after close: %d events %v, %d skipped, last %v; want the one line before Close, last", len(evs), evs, skipped, last)
	}
}

// However many lines come while nobody takes them, the queue holds no more than its
// limits' worth of them.
func TestQueueMemoryIsBounded(t *testing.T) {
	task := &plan.Task{Name: "t"}
	q := NewQueue(QueueLimits{})
	long := strings.Repeat("x", 1000)
	for range 100_000 { // 100 MB of lines
		q.Event(Event{Kind: TaskOutput, Task: task, Line: long}, nil)
	}
	evs, skipped, _ := q.Take()
	held := 0
	for _, ev := range evs {
		held += len(ev.Line)
	}
	if held > defaultQueueBytes || len(evs) > defaultQueueLines || len(evs)+skipped != 100_000 {
		t.Errorf("held %d lines (%d bytes), skipped %d; want at most %d lines and %d bytes, the rest counted", len(evs), held, skipped, defaultQueueLines, defaultQueueBytes)
	}
}

// Full, a Queue coalesces a task's metric values: the newest of each task and metric
// replaces the one queued since it was full, and is counted; a value never moves before an
// earlier event of its task (its end is kept, in order, whatever the count).
func TestQueueCoalescesMetrics(t *testing.T) {
	t1, t2 := &plan.Task{Name: "t1"}, &plan.Task{Name: "t2"}
	m := func(task *plan.Task, step int) Event {
		return Event{Kind: TaskMetric, Task: task, Metric: "acc", Step: step}
	}
	q := NewQueue(QueueLimits{Metrics: 2})
	for _, ev := range []Event{
		m(t1, 1), m(t1, 2), // full from here
		m(t1, 3), m(t2, 1), m(t1, 4), // t1's 4 replaces its 3
		{Kind: TaskEnded, Task: t1, End: EndFinal},
		m(t1, 5), m(t1, 6), m(t2, 2), // 6 replaces 5 (after the end), t2's 2 its 1
		{Kind: TaskMetric, Task: t2, Metric: "loss", Step: 1}, // another metric: its own
	} {
		if !q.Put(ev) {
			t.Fatalf("put %v refused", brief(ev))
		}
	}
	evs, skipped, _ := q.Take()
	var got []string
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("%s %s %s %d", ev.Kind, ev.Task.Name, ev.Metric, ev.Step))
	}
	want := []string{"metric t1 acc 1", "metric t1 acc 2", "metric t1 acc 4", "metric t2 acc 2", "end t1  0",
		"metric t1 acc 6", "metric t2 loss 1"}
	if !slices.Equal(got, want) || skipped != 3 {
		t.Errorf("took %q, %d coalesced; want %q, 3", got, skipped, want)
	}
}

// However many metric values come while nobody takes them, the queue holds no more than its
// limit and one per task and metric since that task's last end, and keeps every end.
func TestQueueMetricsAreBounded(t *testing.T) {
	tasks := []*plan.Task{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	q := NewQueue(QueueLimits{})
	ends := 0
	for step := 1; step <= 100_000; step++ {
		for _, task := range tasks {
			q.Put(Event{Kind: TaskMetric, Task: task, Metric: "acc", Step: step})
		}
		if step%1000 == 0 { // an attempt ends: kept
			q.Put(Event{Kind: TaskEnded, Task: tasks[step%3], End: EndRequeue})
			ends++
		}
		if n, bound := q.Len(), defaultQueueMetrics+len(tasks)+2*ends; n > bound {
			t.Fatalf("%d events held at step %d, want at most %d", n, step, bound)
		}
	}
	evs, _, _ := q.Take()
	kept := 0
	for _, ev := range evs {
		if ev.Kind == TaskEnded {
			kept++
		}
	}
	if kept != ends {
		t.Errorf("%d ends kept of %d", kept, ends)
	}
}
