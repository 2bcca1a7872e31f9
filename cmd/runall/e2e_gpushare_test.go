// End-to-end tests of per-trial GPU memory while trials share a device: each runs in the
// pid modes simulated GPUs offer, as a driver does (gpuPIDModes), and checks each trial's own
// peak, OOM requeue and learning from the --results file.

package main_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// gpuPIDMode is what the simulated driver reports as its processes' pids
// (RUNALL_FAKE_HOST_PIDS): runall's own, the host's (a container under an older driver) or none.
type gpuPIDMode struct {
	name   string
	env    string // RUNALL_FAKE_HOST_PIDS
	source string // the peak_gpu_memory_source a trial alone in its processes gets
}

var gpuPIDModes = []gpuPIDMode{
	{"pids are runall's", "", "process"},
	{"pids are the host's", "1", "order"},
	{"no pids", "none", "device"},
}

func (e *e2e) setPIDMode(m gpuPIDMode) {
	if m.env != "" {
		e.env = append(e.env, "RUNALL_FAKE_HOST_PIDS="+m.env)
	}
}

// forPIDModes runs test once per pid mode that reports processes (skipping "none" unless
// withNone), in parallel.
func forPIDModes(t *testing.T, withNone bool, test func(t *testing.T, e *e2e, m gpuPIDMode)) {
	t.Parallel()
	for _, m := range gpuPIDModes {
		if m.env == "none" && !withNone {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := newGPUE2E(t)
			e.setPIDMode(m)
			test(t, e, m)
		})
	}
}

// settledSlack is what a learned or settled need may exceed the trial's own peak by: the
// learning margin (5%) and one rounding step (64 MiB).
func settledSlack(peak uint64) uint64 { return peak/20 + 64<<20 }

// wantSettled fails unless need, learned or settled for a trial whose own peak is peak, is
// at least that peak and above it by no more than the margin and a rounding step: never a
// provisional reservation, a doubled need, or memory another trial left behind.
func wantSettled(t *testing.T, what string, need, peak uint64) {
	t.Helper()
	if need < peak || need > peak+settledSlack(peak) {
		t.Errorf("%s: need %.2f GiB, want its own %.2f GiB peak plus at most %.0f MiB",
			what, float64(need)/float64(gpuGiB), float64(peak)/float64(gpuGiB), float64(settledSlack(peak))/(1<<20))
	}
}

// wantRequeuedNeed checks the need a requeued trial ended with: settled (wantSettled) where
// its peak is its own figure; where the driver reports no processes and it shared its device,
// it may stay as raised, but never below its peak nor above twice it (rounded up to 256 MiB).
func wantRequeuedNeed(t *testing.T, m gpuPIDMode, what string, need, peak uint64) {
	t.Helper()
	if m.env != "none" {
		wantSettled(t, what, need, peak)
		return
	}
	if need < peak || need > 2*peak+256<<20 {
		t.Errorf("%s: need %.2f GiB, want at least its own %.2f GiB peak and at most twice it",
			what, float64(need)/float64(gpuGiB), float64(peak)/float64(gpuGiB))
	}
}

func (e *e2e) readJSON(name string, v any) {
	e.t.Helper()
	b, err := os.ReadFile(e.path(name))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
}

type gpuShareResults struct {
	PIDs  string `json:"gpu_process_ids"`
	Tasks []struct {
		Name   string `json:"name"`
		Peak   uint64 `json:"peak_gpu_memory"`
		Source string `json:"peak_gpu_memory_source"`
	} `json:"tasks"`
}

// wantPeaks checks that each named trial's peak is within 5% of want and was measured from
// its own processes as mode m does.
func (e *e2e) wantPeaks(m gpuPIDMode, file string, want map[string]uint64) {
	e.t.Helper()
	var res gpuShareResults
	e.readJSON(file, &res)
	wantPIDs := map[string]string{"process": "here", "order": "elsewhere", "device": "none"}[m.source]
	if res.PIDs != wantPIDs {
		e.t.Errorf("gpu_process_ids = %q, want %q", res.PIDs, wantPIDs)
	}
	seen := 0
	for _, tr := range res.Tasks {
		w, ok := want[tr.Name]
		if !ok {
			continue
		}
		seen++
		if off := math.Abs(float64(tr.Peak)-float64(w)) / float64(w); off > 0.05 {
			e.t.Errorf("%s: peak_gpu_memory %.2f GiB, want %.2f GiB within 5%% (off by %.0f%%)",
				tr.Name, float64(tr.Peak)/float64(gpuGiB), float64(w)/float64(gpuGiB), 100*off)
		}
		if tr.Source != m.source {
			e.t.Errorf("%s: peak_gpu_memory_source %q, want %q", tr.Name, tr.Source, m.source)
		}
	}
	if seen != len(want) {
		e.t.Errorf("found %d of the %d trials %v in the results", seen, len(want), want)
	}
}

// Trials of 5, 7 and 9 GiB share one device, growing over a second: each trial's peak is its
// own claim, not a share of the device's growth.
func TestGPUSharedPeaks(t *testing.T) {
	forPIDModes(t, false, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("share-peaks.yml", "32GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		res.allOK(t)
		if got := gpuMostAtOnce(res.Tasks); got < 3 {
			t.Errorf("at most %d trials ran at once, want at least 3: the test proves nothing\n%s", got, gpuIntervals(res.Tasks))
		}
		e.wantPeaks(m, "results.json", map[string]uint64{
			"trial 5": 5 * gpuGiB, "trial 7": 7 * gpuGiB, "trial 9": 9 * gpuGiB, "trial 6": 6 * gpuGiB,
		})
	})
}

// Without pids a trial's peak is an estimate, and the summary says so.
func TestGPUEstimatedPeaksAreMarked(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	e.setPIDMode(gpuPIDModes[2])
	r := e.runGPUFile("share-peaks.yml", "32GiB")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "/~") { // NEED/PEAK: 7.0/~5.1 GiB
		t.Errorf("the summary does not mark estimated peaks with ~\n%v", r)
	}
	var res gpuShareResults
	e.readJSON("results.json", &res)
	for _, tr := range res.Tasks {
		if tr.Peak > 0 && tr.Source != "device" {
			t.Errorf("%s: peak_gpu_memory_source %q, want \"device\"", tr.Name, tr.Source)
		}
	}
}

// A trial that declares 2 GiB and uses 10 beside honest trials: requeued at its own measured
// need, it finishes, and so do they.
func TestGPUUnderDeclaredBesideHonest(t *testing.T) {
	forPIDModes(t, true, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("share-underdeclare.yml", "32GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		for _, tr := range res.Tasks {
			if tr.Status != "ok" {
				t.Errorf("%s: %s (%s), want ok\n%v", tr.Name, tr.Status, tr.Reason, r)
			}
			if tr.Name != "liar" && tr.OOMRequeues != 0 {
				t.Errorf("%s, an honest trial, was requeued %d times", tr.Name, tr.OOMRequeues)
			}
		}
		liar := res.task(t, "liar")
		if liar.OOMRequeues < 1 {
			t.Errorf("liar was never requeued: the test proves nothing\n%s", gpuIntervals(res.Tasks))
		}
		// Requeued on twice what it showed, its need settles to its own 10 GiB peak.
		wantRequeuedNeed(t, m, "liar", liar.GPUMemory, 10*gpuGiB)
	})
}

// Eight trials, each its own gpu-memory: auto group, on one 32 GiB device: they learn
// beside each other where their processes are told apart.
func TestGPUManyAutoGroups(t *testing.T) {
	forPIDModes(t, false, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("share-auto.yml", "32GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		res.allOK(t)
		if got := gpuMostAtOnce(res.Tasks); got < 3 {
			t.Errorf("at most %d auto trials learned at once, want at least 3\n%s", got, gpuIntervals(res.Tasks))
		}
		if len(res.Learned) != 8 {
			t.Fatalf("learned %d needs, want 8: %v", len(res.Learned), res.Learned)
		}
		for name, n := range res.Learned {
			wantSettled(t, name+" (learned)", n, 6*gpuGiB)
			if tr := res.task(t, name); tr.GPUMemory != n {
				t.Errorf("%s: results report a need of %.2f GiB, want the %.2f GiB it learned (not its provisional reservation)",
					name, float64(tr.GPUMemory)/float64(gpuGiB), float64(n)/float64(gpuGiB))
			}
		}
	})
}

// Two trials launched in the same instant on one device are each given their own processes.
func TestGPUTwoLaunchesAtOnce(t *testing.T) {
	forPIDModes(t, false, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("share-instant.yml", "32GiB")
		r.wantCode(t, 0)
		e.gpuResults("results.json").allOK(t)
		e.wantPeaks(m, "results.json", map[string]uint64{"small": 3 * gpuGiB, "large": 11 * gpuGiB})
	})
}

// A trial of two GPU processes (a launcher and its worker) is the sum of both.
func TestGPUTrialWithTwoProcesses(t *testing.T) {
	forPIDModes(t, false, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("share-twoproc.yml", "32GiB")
		r.wantCode(t, 0)
		e.gpuResults("results.json").allOK(t)
		e.wantPeaks(m, "results.json", map[string]uint64{"pair": 7 * gpuGiB, "single": 5 * gpuGiB})
	})
}

// One trial's process exits as another trial's starts: neither is given the other's memory.
func TestGPUProcessExitsAsAnotherStarts(t *testing.T) {
	forPIDModes(t, false, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("share-handover.yml", "32GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		res.allOK(t)
		want := map[string]uint64{"steady": 4 * gpuGiB}
		for _, n := range []uint64{4, 6, 8} {
			want[fmt.Sprintf("step %d", n)] = n * gpuGiB
		}
		e.wantPeaks(m, "results.json", want)
	})
}

// A sweep whose every trial under-declares its need finishes all the same: each is requeued
// with its own measured need (at most twice its use), never the device's growth, and its
// need settles to its own peak.
func TestGPUUnderDeclaredSweep(t *testing.T) {
	forPIDModes(t, true, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("share-sweep.yml", "32GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		requeues := 0
		for _, tr := range res.Tasks {
			requeues += tr.OOMRequeues
			use, err := strconv.Atoi(strings.TrimPrefix(strings.Split(tr.Name, "-")[0], "trial "))
			if err != nil {
				t.Fatalf("task %q: %v", tr.Name, err)
			}
			if tr.Status != "ok" {
				t.Errorf("%s: %s after %d attempts (%s), want ok", tr.Name, tr.Status, tr.Attempts, tr.Reason)
			}
			// Requeued on twice what it showed, its need settles to its own peak. (One that
			// never ran out of memory ran on the need it declared, or its group's.)
			if tr.OOMRequeues > 0 {
				wantRequeuedNeed(t, m, tr.Name, tr.GPUMemory, uint64(use)*gpuGiB)
			}
		}
		if requeues == 0 {
			t.Errorf("no trial ran out of memory: the test proves nothing\n%s", gpuIntervals(res.Tasks))
		}
	})
}

// On a GPU where the driver keeps memory no process holds and another user's process holds
// 4 GiB from the start, a group learns its need, and the learner's peak is its own: neither
// the reserve nor the other user's process is taken for a trial's.
func TestGPUReserveAndForeignProcess(t *testing.T) {
	forPIDModes(t, true, func(t *testing.T, e *e2e, m gpuPIDMode) {
		r := e.runGPUFile("learn.yml", "32GiB:reserve=512MiB:foreign=4GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		res.allOK(t)
		first := res.Tasks[0]
		learned, ok := res.Learned[first.Name]
		if !ok {
			t.Fatalf("learned_gpu_memory = %v; want one for %q", res.Learned, first.Name)
		}
		wantSettled(t, first.Name+" (learned)", learned, 6*gpuGiB)
		e.wantPeaks(m, "results.json", map[string]uint64{first.Name: 6 * gpuGiB})
	})
}
