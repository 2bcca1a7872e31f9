package runner

import (
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// TestPBTParamsAreEnding (issue 42, point 6): an exploited pbt trial's params in its result
// and in results.json are the values it ended with (its last exploit's), which its metrics
// came from, and initial_params those it started with; the importance is judged by them.
func TestPBTParamsAreEnding(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 3, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: {method: pbt, interval: 2, max: 6, quantile: 0.34, perturb: [0.8, 1.25], resample: 0}
    parallel-tasks:
`+widthTrial, Options{Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	written, err := results.Read(filepath.Join(res.LogDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	exploited := 0
	for i, r := range res.Tasks {
		for _, got := range []results.Task{r, written.Tasks[i]} {
			if len(got.Lineage) == 0 {
				if got.InitialParams != nil {
					t.Errorf("%s, never exploited: initial_params %v, want none", got.Name, got.InitialParams)
				}
				continue
			}
			exploited++
			last := got.Lineage[len(got.Lineage)-1].Params
			if !maps.Equal(got.Params, last) {
				t.Errorf("%s: params %v, want the values it ended with, %v", got.Name, got.Params, last)
			}
			if want := "w=" + got.InitialParams["width"] + " s=" + got.InitialParams["s"]; want != got.Name {
				t.Errorf("%s: initial_params %v, want the values it started with", got.Name, got.InitialParams)
			}
		}
	}
	if exploited == 0 {
		t.Fatalf("no trial was exploited\n%s", out)
	}
	if _, ok := res.Importance["acc"]; !ok {
		t.Errorf("no importance for acc: %+v", res.Importance)
	}
}
