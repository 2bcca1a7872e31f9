package main_test

import (
	"slices"
	"strings"
	"testing"
)

// The second run of a file starts the trials the first recorded as longest first; check
// --simulate predicts that run from the same history; order: file keeps file order.
func TestOrderLongestFirstAndSimulate(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	e.runGPUFile("order.yml", "32GiB").wantCode(t, 0)
	second := e.runGPUFile("order.yml", "32GiB")
	second.wantCode(t, 0)
	first3 := firstStarted(e.gpuResults("results.json").Tasks, 3)
	for _, n := range first3 {
		if !strings.HasPrefix(n, "long ") {
			t.Errorf("the second run started %v first, want the three long trials\n%v", first3, second)
		}
	}

	sim := e.runGPU("check", "--simulate", "--fake-gpus", "32GiB", "--log-dir", "logs", testdata("gpu/order.yml"))
	sim.wantCode(t, 0)
	for _, want := range []string{"GPU 0 ", "peak 30.0 GiB, 6 tasks", "long 1", "short 3", "Predicted makespan:"} {
		if !strings.Contains(sim.stdout, want) {
			t.Errorf("check --simulate does not say %q\n%v", want, sim)
		}
	}
	if strings.Contains(sim.stdout, "guessed") {
		t.Errorf("durations were recorded, yet some are guessed\n%v", sim)
	}

	none := e.runGPU("check", "--simulate", "--fake-gpus", "32GiB", "--log-dir", "no-logs", testdata("gpu/order.yml"))
	if none.code == 0 || !strings.Contains(none.stderr, "--duration") {
		t.Errorf("with no history and no --duration: exit %d, want an error naming --duration\n%v", none.code, none)
	}
}

// firstStarted names the n trials that started first.
func firstStarted(tasks []gpuTaskResult, n int) []string {
	sorted := slices.Clone(tasks)
	slices.SortStableFunc(sorted, func(a, b gpuTaskResult) int { return a.StartedAt.Compare(b.StartedAt) })
	var out []string
	for _, t := range sorted[:min(n, len(sorted))] {
		out = append(out, t.Name)
	}
	return out
}
