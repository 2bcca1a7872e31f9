package searchsource

import (
	"context"
	"slices"
	"testing"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/search"
)

// fakeRun is the run as a test tells it: each command's result, and what was said.
type fakeRun struct {
	results map[*plan.Task][]results.Task
	varied  map[*plan.Task]bool
	said    []string
}

func (f *fakeRun) Varied(t *plan.Task) bool { return f.varied[t] }

func (f *fakeRun) Say(line string)                     { f.said = append(f.said, line) }
func (f *fakeRun) Halted() bool                        { return false }
func (f *fakeRun) FailUnrunnable(*plan.Task, string)   {}
func (f *fakeRun) Results(t *plan.Task) []results.Task { return f.results[t] }
func (f *fakeRun) MaxID() int                          { return 0 }
func (f *fakeRun) Made(_, _ *plan.Task)                {}
func (f *fakeRun) UntilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
func (f *fakeRun) Recording(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// A trial is told complete with its objectives' values in config's order, pruned when a
// command was pruned, and failed when a command failed or it reported no objective (which
// is said); a diverged trial is told failed, and so is one on-oom halved.
func TestOutcomeFromTheRunsResults(t *testing.T) {
	objs := []plan.Objective{{Metric: "acc", Mode: "max"}, {Metric: "loss", Mode: "min"}}
	tmpl := &plan.Task{Name: "trial", Search: &plan.Search{Trials: 1}}
	p := &plan.Plan{Config: plan.Config{Objective: &objs[0], Objectives: objs}}
	done, pruned, failed, silent := &plan.Task{Name: "done"}, &plan.Task{Name: "pruned"}, &plan.Task{Name: "failed"}, &plan.Task{Name: "silent"}
	diverged, halved := &plan.Task{Name: "diverged"}, &plan.Task{Name: "halved"}
	run := &fakeRun{results: map[*plan.Task][]results.Task{
		done:   {{Status: results.StatusOK, Metrics: map[string]float64{"loss": 0.25, "acc": 0.5}}},
		pruned: {{Status: results.StatusPruned, Metrics: map[string]float64{"acc": 0.1, "loss": 2}}},
		failed: {{Status: results.StatusFailed, Metrics: map[string]float64{"acc": 0.9, "loss": 1}}},
		silent: {{Status: results.StatusOK, Metrics: map[string]float64{"acc": 0.9}}},
		// diverged-on ended it: its values are no measure of its params (issue 44, point 4)
		diverged: {{Status: results.StatusDiverged, Metrics: map[string]float64{"acc": 0.9, "loss": 1}}},
		// on-oom halved a param the sampler proposed: it ran with a value it did not (issue 45)
		halved: {{Status: results.StatusOK, Metrics: map[string]float64{"acc": 0.9, "loss": 1}}},
	}, varied: map[*plan.Task]bool{halved: true}}
	s := New(Options{Run: run, Plan: p}, &plan.Task{Name: "sweep"}, tmpl)
	for _, tc := range []struct {
		t      *plan.Task
		state  string
		values []string
	}{
		{done, search.StateComplete, []string{"0.5", "0.25"}},
		{pruned, search.StatePruned, nil},
		{failed, search.StateFail, nil},
		{silent, search.StateFail, nil},
		{diverged, search.StateFail, nil},
		{halved, search.StateFail, nil},
	} {
		if state, values := s.outcome(tc.t); state != tc.state || !slices.Equal(values, tc.values) {
			t.Errorf("%s: told %s %v, want %s %v", tc.t.Name, state, values, tc.state, tc.values)
		}
	}
	if want := []string{"silent: reported no loss: told as failed", "halved: ran with values its sampler did not propose (on-oom): told as failed"}; !slices.Equal(run.said, want) {
		t.Errorf("said %q, want %q", run.said, want)
	}
}
