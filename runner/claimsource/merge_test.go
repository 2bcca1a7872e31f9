package claimsource

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// A claims sweep's merged results rank the whole sweep: each trial's record was written by
// the runall that ran it, alone, and holds no front (or its own, of one trial); the merge
// gives every trial its front among all and each objective its importances over all.
func TestClaimsMergeRanksTheWholeSweep(t *testing.T) {
	objs := []plan.Objective{{Metric: "acc", Mode: "max"}, {Metric: "latency", Mode: "min"}}
	p := &plan.Plan{File: "tasks.yml", Config: plan.Config{Objective: &objs[0], Objectives: objs}}
	// config objective as the run hands it to the claims (runner's objectiveOf, objectivesOf)
	o := Options{Plan: p, Objective: &results.Objective{Metric: "acc", Mode: "max"},
		Objectives: []results.Objective{{Metric: "acc", Mode: "max"}, {Metric: "latency", Mode: "min"}}}
	// (acc, latency): b and d and e are the first front; a is beaten by e, c by a.
	values := map[string][2]float64{"a": {0.9, 30}, "b": {0.8, 10}, "c": {0.85, 40}, "d": {0.7, 5}, "e": {0.9, 20}}
	want := map[string]int{"a": 2, "b": 1, "c": 3, "d": 1, "e": 1}
	var recs []claims.Record
	id := 0
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		id++
		v := values[name]
		part := &results.Run{RunID: "run-" + name, Status: results.StatusOK, Objective: o.Objective, Objectives: o.Objectives,
			Tasks: []results.Task{{ID: id, Name: name, Status: results.StatusOK, ParetoRank: 1,
				Params: map[string]string{"lr": fmt.Sprint(id)}, Metrics: map[string]float64{"acc": v[0], "latency": v[1]}}}}
		body, err := json.Marshal(part)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, claims.Record{Key: name, Owner: claims.Owner{Host: "pod-" + name, RunID: part.RunID}, Result: body})
	}
	merged, err := mergeRecords(o, recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range merged.Tasks {
		if tr.ParetoRank != want[tr.Name] {
			t.Errorf("%s: front %d, want %d", tr.Name, tr.ParetoRank, want[tr.Name])
		}
	}
	if merged.Best != "a" && merged.Best != "e" {
		t.Errorf("best %q, want a or e (acc 0.9)", merged.Best)
	}
	for _, m := range []string{"acc", "latency"} {
		if merged.Importance[m].Trials != 5 {
			t.Errorf("importance for %s: %+v, want it over the 5 trials", m, merged.Importance[m])
		}
	}
}
