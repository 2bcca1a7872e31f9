package stopwhen

import (
	"testing"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// A top-level command that meets the condition stops nothing; a trial that ends ok with a
// metric that meets it closes the gate once, saying so, and the reason stays the first's.
func TestWatchClosesTheGate(t *testing.T) {
	setup := &plan.Task{Name: "setup", Cmd: "true"}
	a, b := &plan.Task{Name: "a", Cmd: "true"}, &plan.Task{Name: "b", Cmd: "true"}
	p := &plan.Plan{Config: plan.Config{StopWhen: &plan.Condition{Metric: "acc", Op: ">=", Value: 0.9, Text: "acc >= 0.9"}},
		Tasks: []*plan.Task{setup, {Name: "sweep", Parallel: []*plan.Task{a, b}}}}
	w := New(p)
	var said []string
	emit := func(ev event.Event) { said = append(said, ev.Line) }
	end := func(task *plan.Task, status results.Status, acc float64) {
		w.Event(event.Event{Kind: event.TaskEnded, Task: task, End: event.EndFinal, Status: status, Metrics: map[string]float64{"acc": acc}}, emit)
	}
	end(setup, results.StatusOK, 1)
	end(a, results.StatusFailed, 1)
	end(a, results.StatusOK, 0.5)
	if _, skip := w.Gate(); skip || len(said) != 0 || w.Reason() != "" {
		t.Fatalf("the gate closed before a trial met the condition: said %q", said)
	}
	end(a, results.StatusOK, 0.95)
	end(b, results.StatusOK, 0.99)
	want := `stop-when "acc >= 0.9" was met by "a" (acc=0.95)`
	if reason, skip := w.Gate(); !skip || reason != "not started: "+want || w.Reason() != want {
		t.Errorf("gate %q, %v; reason %q; want %q", reason, skip, w.Reason(), want)
	}
	if len(said) != 1 {
		t.Errorf("said %q, want one line", said)
	}
}
