package main_test

import (
	"encoding/json"
	"testing"
)

// TestClaimsTwoObjectives: two runalls share a sweep of two objectives; each records the
// trials it ran, and the merged results under the prefix give every trial its Pareto front
// among the whole sweep's, and each objective its importance over all six trials.
func TestClaimsTwoObjectives(t *testing.T) {
	t.Parallel()
	c := newClaimsE2E(t)
	for _, p := range []*proc{c.start(0, "claims/objectives.yml"), c.start(1, "claims/objectives.yml")} {
		p.wait().wantCode(t, 0)
	}
	body, _ := c.get(c.prefix + "results.json")
	var merged struct {
		Best       string `json:"best"`
		Objectives []struct {
			Metric string `json:"metric"`
		} `json:"objectives"`
		Importance map[string]struct {
			Trials int `json:"trials"`
		} `json:"importance"`
		Tasks []struct {
			Name       string `json:"name"`
			ParetoRank int    `json:"pareto_rank"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(body), &merged); err != nil {
		t.Fatalf("merged results: %v\n%s", err, body)
	}
	want := map[string]int{"trial 0": 1, "trial 1": 1, "trial 2": 1, "trial 3": 2, "trial 4": 3, "trial 5": 4}
	if len(merged.Tasks) != 6 || len(merged.Objectives) != 2 || merged.Best != "trial 2" {
		t.Fatalf("merged: %d tasks, objectives %v, best %q; want 6, loss and size, trial 2\n%s", len(merged.Tasks), merged.Objectives, merged.Best, body)
	}
	for _, tr := range merged.Tasks {
		if tr.ParetoRank != want[tr.Name] {
			t.Errorf("%s: front %d, want %d", tr.Name, tr.ParetoRank, want[tr.Name])
		}
	}
	for _, m := range []string{"loss", "size"} {
		if merged.Importance[m].Trials != 6 {
			t.Errorf("importance for %s over %d trials, want 6\n%s", m, merged.Importance[m].Trials, body)
		}
	}
}
