// End-to-end tests of gpu-sharing: progress on simulated GPUs: light trials pack several
// to a GPU, heavy ones settle at one, and trials that contend for something the simulation
// does not model (a lock on the host) settle where their measured rates say, the one that
// lowered the GPU's throughput paused at its checkpoint and resumed.

package main_test

import (
	"strings"
	"testing"
)

// sharingResults is what results.json keeps of a run that shares GPUs by progress.
type sharingResults struct {
	Tasks []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Tries  int    `json:"attempts"`
	} `json:"tasks"`
	Sharing *struct {
		Trials []struct {
			Trial    string  `json:"trial"`
			Alone    float64 `json:"rate_alone"`
			Shared   float64 `json:"rate_shared"`
			Slowdown float64 `json:"slowdown"`
		} `json:"trials"`
		GPUs []struct {
			GPU    string `json:"gpu"`
			Counts []struct {
				At     float64 `json:"at"`
				Trials int     `json:"trials"`
			} `json:"trials_over_time"`
		} `json:"gpus"`
		Decisions []struct {
			GPU    string `json:"gpu"`
			Action string `json:"action"`
			Trials int    `json:"trials"`
			Line   string `json:"line"`
		} `json:"decisions"`
		Speedup float64 `json:"speedup"`
		Summary string  `json:"summary"`
	} `json:"gpu_sharing"`
}

// runShared runs testdata/sharing/file on simulated GPUs gpus and reads its results; every
// trial must end ok.
func runShared(t *testing.T, e *e2e, gpus, file string) (sharingResults, result) {
	t.Helper()
	r := e.run("--fake-gpus", gpus, "--results", e.path("results.json"), testdata("sharing/"+file))
	r.wantCode(t, 0)
	var res sharingResults
	e.readJSON("results.json", &res)
	if res.Sharing == nil {
		t.Fatalf("results.json has no gpu_sharing\n%v", r)
	}
	for _, tk := range res.Tasks {
		if tk.Status != "ok" {
			t.Errorf("%s ended %s, want ok", tk.Name, tk.Status)
		}
	}
	if !strings.Contains(r.stdout, "GPU sharing (gpu-sharing: progress): "+res.Sharing.Summary) || res.Sharing.Summary == "" {
		t.Errorf("the summary does not say what sharing bought (%q)\n%v", res.Sharing.Summary, r)
	}
	for _, d := range res.Sharing.Decisions {
		if !strings.Contains(r.stdout, "gpu-sharing: "+d.Line) {
			t.Errorf("decision %q kept in results.json was not said in the output", d.Line)
		}
	}
	return res, r
}

// mostAtOnce is the most trials each GPU had at once.
func (s sharingResults) mostAtOnce() map[string]int {
	most := map[string]int{}
	for _, g := range s.Sharing.GPUs {
		for _, c := range g.Counts {
			most[g.GPU] = max(most[g.GPU], c.Trials)
		}
	}
	return most
}

// actions counts the decisions by action, and by action and number of trials ("lower@3").
func (s sharingResults) actions() map[string]int {
	n := map[string]int{}
	for _, d := range s.Sharing.Decisions {
		n[d.Action]++
		n[d.Action+"@"+string(rune('0'+d.Trials))]++
	}
	return n
}

// TestGPUSharingLightPacks: trials whose GPU computes a fifth of each step gain from
// sharing it. On GPUs that report no processes, and so no utilisation per process, one GPU
// takes one more while the last one raised its throughput: three or more at once, and no
// drop measured at three or fewer (a fourth is slower on the simulated GPU, 0.8 of it busy
// and 1.75x its switching: a run that got that far lowers at four). On GPUs that report
// each process's utilisation, trials join while their busy shares fit in the GPU's time
// (five of 0.2), before each mix is measured, and the mix they made is judged by its rates.
// Either way the sweep ran faster than one at a time by its measured rates.
func TestGPUSharingLightPacks(t *testing.T) {
	t.Parallel()
	t.Run("rates", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		e.env = append(e.env, "RUNALL_FAKE_HOST_PIDS=none")
		res, r := runShared(t, e, "1x32GiB", "light.yml")
		acts := res.actions()
		if most := res.mostAtOnce()["0"]; most < 3 || acts["open"] < 2 || acts["lower@2"]+acts["lower@3"] > 0 {
			t.Errorf("light trials: at most %d at once on GPU 0, decisions %v; want 3 or more, opened twice or more, never lowered at 3 or fewer\n%v", most, acts, r)
		}
		if res.Sharing.Speedup <= 1 {
			t.Errorf("light trials: speedup %.2f, want above 1", res.Sharing.Speedup)
		}
	})
	t.Run("busy shares", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		res, r := runShared(t, e, "1x32GiB", "light.yml")
		acts := res.actions()
		if most := res.mostAtOnce()["0"]; most < 3 || most > 5 || acts["lower@2"]+acts["lower@3"] > 0 {
			t.Errorf("light trials: at most %d at once on GPU 0, decisions %v; want 3 to 5, never lowered at 3 or fewer\n%v", most, acts, r)
		}
		if !strings.Contains(r.stdout, " trials up to light-") {
			t.Errorf("light trials: no mix that trials joined by their busy shares was judged against the one before them\n%v", r)
		}
		if res.Sharing.Speedup <= 1 {
			t.Errorf("light trials: speedup %.2f, want above 1", res.Sharing.Speedup)
		}
	})
}

// TestGPUSharingSleepersRunAtOnce: trials whose GPU processes run no kernel (they sleep
// and print their progress) do not slow each other: on GPUs that report each process's
// utilisation, their busy share of 0 lets them all join once the driver reported the first
// at 0%, without a rate window, and the eight run at once, as packing by memory would run
// them (issue 42, point 4).
func TestGPUSharingSleepersRunAtOnce(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	res, r := runShared(t, e, "1x32GiB", "sleepers.yml")
	if most := res.mostAtOnce()["0"]; most != 8 {
		t.Errorf("sleepers: at most %d at once on GPU 0, want all 8\n%v", most, r)
	}
}

// TestGPUSharingHeavySettlesAtOne: trials that keep the GPU busy lose from sharing it
// (time-slicing and its switching cost). On GPUs that report no processes, and so no
// utilisation per process, each of two GPUs takes a second once, measures the drop, says it
// with its figures, and takes no more; on GPUs that report each process's utilisation, the
// first trial's busy share fills its GPU, and no second is ever tried there.
func TestGPUSharingHeavySettlesAtOne(t *testing.T) {
	t.Parallel()
	t.Run("rates", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		e.env = append(e.env, "RUNALL_FAKE_HOST_PIDS=none")
		res, r := runShared(t, e, "2x32GiB", "heavy.yml")
		for gpu, most := range res.mostAtOnce() {
			if most > 2 {
				t.Errorf("heavy trials: GPU %s had %d at once, want at most 2 (one to measure the drop)", gpu, most)
			}
		}
		for _, d := range res.Sharing.Decisions {
			if d.Trials > 1 && (d.Action != "lower" || !strings.Contains(d.Line, "one fewer")) {
				t.Errorf("heavy trials: %s with %d trials (%q), want lower", d.Action, d.Trials, d.Line)
			}
		}
		if res.actions()["lower"] == 0 {
			t.Errorf("heavy trials: no GPU lowered, decisions %v\n%v", res.actions(), r)
		}
		for _, tr := range res.Sharing.Trials {
			if tr.Shared > 0 && tr.Slowdown < 1.5 {
				t.Errorf("heavy trial %s shared ran %.2fx slower than alone, want 1.5x or more", tr.Trial, tr.Slowdown)
			}
		}
	})
	t.Run("busy shares", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		res, r := runShared(t, e, "2x32GiB", "heavy.yml")
		for gpu, most := range res.mostAtOnce() {
			if most != 1 {
				t.Errorf("heavy trials: GPU %s had %d at once, want 1\n%v", gpu, most, r)
			}
		}
		if acts := res.actions(); acts["alone"] != 4 || len(res.Sharing.Decisions) != 4 {
			t.Errorf("heavy trials: decisions %v, want each of the 4 measured alone and nothing else\n%v", acts, r)
		}
		if !strings.Contains(r.stdout, "its trials keep it busy 100% of the time alone: one more would only take turns") {
			t.Errorf("heavy trials: no trial waited for a GPU its busy share filled\n%v", r)
		}
	})
}

// TestGPUSharingHalfSMsUnderMPS: under gpu-isolation: mps, two trials that keep the GPU
// busy but fill half its SMs run side by side: their busy shares alone add up to twice the
// GPU's time, which keeps a second out only where kernels take turns (without MPS), so the
// second is tried, and the rates judge the pair.
func TestGPUSharingHalfSMsUnderMPS(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	res, r := runShared(t, e, "1x32GiB", "mps-half.yml")
	if most := res.mostAtOnce()["0"]; most != 2 || strings.Contains(r.stdout, "would only take turns") {
		t.Errorf("half-SM trials under MPS: at most %d at once, want 2, and no wait for a GPU to take turns\n%v", most, r)
	}
}

// TestGPUSharingHostLock: trials contend for two locks on the host, which the simulated GPU
// does not model (it sees no compute from them at all), each holding one for the whole of
// each step: two run at full speed, a third only waits and thrashes. Packing by progress settles at two from their measured rates,
// pauses the third at its next checkpoint copy, and resumes it later from there. Locks, not
// this machine's CPU cores: the cores are shared with other builds and tests, and where trials
// settle on them would follow that load, not the test's. The GPUs report no processes, so
// the rates decide alone: where they report each process's utilisation, trials whose
// processes run no kernel join at once (TestGPUSharingSleepersRunAtOnce), and the rates then
// judge the mix they made against the one before them.
func TestGPUSharingHostLock(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	e.env = append(e.env, "RUNALL_FAKE_HOST_PIDS=none")
	python := pythonWith(t, "fcntl", "python3")
	e.env = append(e.env, "PYTHON="+python, "SCRIPTS="+testdata("sharing"), "WORK="+e.dir)
	res, r := runShared(t, e, "1x32GiB", "hostlock.yml")
	acts := res.actions()
	if most := res.mostAtOnce()["0"]; most != 3 || acts["open@2"] == 0 || acts["lower@3"] == 0 {
		t.Errorf("host lock: at most %d at once, decisions %v; want 3 once, opened at 2, lowered at 3\n%v", most, acts, r)
	}
	resumed := false
	for _, tk := range res.Tasks {
		resumed = resumed || tk.Tries > 1
	}
	if !resumed || !strings.Contains(r.stdout, "gpu-sharing: it lowered its GPU's throughput") || !strings.Contains(r.stdout, "resumed from step") {
		t.Errorf("host lock: the trial that lowered the GPU was not paused at a copy and resumed from it\n%v", r)
	}
}
