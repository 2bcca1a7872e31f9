package diverge

import (
	"math"
	"testing"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/taskfile"
)

type stops map[string]results.Status

func (s stops) Stop(t *plan.Task, status results.Status, _ string) bool {
	s[t.Name] = status
	return true
}

// TestWatch: a NaN or infinite value of a watched metric stops its trial as diverged, once;
// a number, or a metric the rule does not watch, stops nothing; every rule off: no watch.
func TestWatch(t *testing.T) {
	auto := &plan.Faults{}
	names := &plan.Faults{DivergedOn: taskfile.DivergedOn{Names: []string{"grad"}}}
	trial := func(name string, f *plan.Faults) *plan.Task { return &plan.Task{Name: name, Faults: f} }
	a, b, c, d := trial("a", auto), trial("b", auto), trial("c", names), trial("d", auto)
	d.EarlyStop = &earlystop.Config{Metric: "acc"}
	p := &plan.Plan{Tasks: []*plan.Task{{Name: "block", Parallel: []*plan.Task{a, b, c, d}, Faults: auto}},
		Config: taskfile.Config{FailFast: 3, Objectives: []taskfile.Objective{{Metric: "score"}}}}
	w := New(p)
	s := stops{}
	w.UseStopper(s)
	metric := func(t *plan.Task, name string, v float64) {
		w.Event(event.Event{Kind: event.TaskMetric, Task: t, Metric: name, Value: v, Step: 1}, nil)
	}
	metric(a, "val_loss", 0.5)
	metric(a, "grad", math.NaN()) // auto does not watch grad
	metric(b, "score", math.Inf(1))
	metric(c, "loss", math.NaN()) // a list watches its names alone
	metric(c, "grad", math.NaN())
	metric(d, "acc", math.NaN()) // the early-stop metric
	want := stops{"b": results.StatusDiverged, "c": results.StatusDiverged, "d": results.StatusDiverged}
	if len(s) != len(want) || s["b"] != want["b"] || s["c"] != want["c"] || s["d"] != want["d"] {
		t.Errorf("stopped %v, want %v", s, want)
	}
	off := &plan.Faults{DivergedOn: taskfile.DivergedOn{Off: true}}
	if New(&plan.Plan{Tasks: []*plan.Task{{Parallel: []*plan.Task{trial("x", off)}, Faults: off}},
		Config: taskfile.Config{DivergedOn: taskfile.DivergedOn{Off: true}}}) != nil {
		t.Error("a watch where every rule is off")
	}
}
