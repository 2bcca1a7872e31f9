package output

import (
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// TestSearchBlockCounted: the trials a sampler makes stand in their block in the place of
// the search: template, which counts again only when it ends itself (its sampler failed): the
// outputs ended at "3/4 done" with every trial done.
func TestSearchBlockCounted(t *testing.T) {
	tmpl := &plan.Task{Name: "x=<x>", Cmd: "train <x>", Search: &plan.Search{Trials: 3}}
	block := &plan.Task{Name: "search", Parallel: []*plan.Task{tmpl}}
	p := &plan.Plan{Tasks: []*plan.Task{block}}
	var trials []*plan.Task
	parent := map[*plan.Task]*plan.Task{}
	for _, n := range []string{"x=1", "x=2", "x=3"} {
		step := &plan.Task{Name: "eval", Cmd: "eval"}
		tr := &plan.Task{Name: n, Steps: []*plan.Task{step}}
		parent[tr], parent[step] = block, tr
		trials = append(trials, step)
	}
	parentOf := func(t *plan.Task) (*plan.Task, bool) { k, ok := parent[t]; return k, ok }
	rs := newRunState(p, parentOf)
	now := time.Now()
	if got := rs.total(); got != 1 {
		t.Fatalf("before any trial: %d commands, want the template's 1", got)
	}
	for _, s := range trials {
		rs.apply(event.Event{Kind: event.TaskStarted, Task: s, Attempt: 1}, now)
		rs.apply(event.Event{Kind: event.TaskEnded, End: event.EndFinal, Task: s, Status: results.StatusOK}, now)
	}
	c := rs.counts()
	if rs.total() != 3 || finished(c) != 3 || rs.nodes[block].state() != stOK {
		t.Errorf("every trial done: %d/%d done, the block %s; want 3/3, ok", finished(c), rs.total(), rs.nodes[block].state())
	}
	if got := rs.label(rs.nodes[trials[0]]); got != "x=1 / eval" {
		t.Errorf("a made trial's step is labelled %q, want it under its trial", got)
	}
	rs.apply(event.Event{Kind: event.TaskEnded, End: event.EndFinal, Task: tmpl, Status: results.StatusFailed}, now)
	if rs.total() != 4 || rs.nodes[block].state() != stFailed {
		t.Errorf("the sampler failed: %d commands, the block %s; want 4, failed", rs.total(), rs.nodes[block].state())
	}
}
