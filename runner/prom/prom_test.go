package prom

import (
	"testing"
	"time"

	"github.com/runall/runall/internal/plantest"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

// TestPendingGaugeExcludesRunning (issue: runall_tasks{state="pending"} still counts
// running tasks): a task is pending, running or finished, never two at once, through
// retries and OOM requeues.
func TestPendingGaugeExcludesRunning(t *testing.T) {
	p := plantest.Load(t, "tasks: [{cmd: a}, {cmd: b}, {cmd: c}]\n")
	m := New(p)
	state := func() map[string]float64 {
		fams, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			if f.GetName() != "runall_tasks" {
				continue
			}
			for _, s := range f.GetMetric() {
				got[s.GetLabel()[0].GetValue()] = s.GetGauge().GetValue()
			}
		}
		return got
	}
	check := func(step string, pending, running, ok float64) {
		t.Helper()
		got := state()
		if got["pending"] != pending || got["running"] != running || got["ok"] != ok {
			t.Errorf("%s: pending %v, running %v, ok %v; want %v, %v, %v", step, got["pending"], got["running"], got["ok"], pending, running, ok)
		}
	}
	a, b := p.Tasks[0], p.Tasks[1]
	check("start", 3, 0, 0)
	m.Event(event.Event{Kind: event.TaskStarted, Task: a}, nil)
	m.Event(event.Event{Kind: event.TaskStarted, Task: b}, nil)
	check("two started", 1, 2, 0)
	m.Event(event.Event{Kind: event.TaskEnded, Task: a, End: event.EndRequeue, Status: results.StatusFailed}, nil) // pending again
	check("one requeued", 2, 1, 0)
	m.Event(event.Event{Kind: event.TaskEnded, Task: b, End: event.EndFinal, Status: results.StatusOK, Duration: time.Second}, nil)
	check("one finished", 2, 0, 1)
}
