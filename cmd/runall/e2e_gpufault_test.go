package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What becomes of the trials on a GPU taken out of service (issue 45, point 1).

// gpuHealth is results.json's gpus: each GPU's health as the run watched it.
type gpuHealth struct {
	GPUs []struct {
		GPU    int    `json:"gpu"`
		Health string `json:"health"`
		Faults []struct {
			Fault      string    `json:"fault"`
			Kind       string    `json:"kind"`
			Xid        uint64    `json:"xid"`
			Resolution string    `json:"resolution"`
			Seen       time.Time `json:"seen"`
			Action     string    `json:"action"`
		} `json:"faults"`
	} `json:"gpus"`
}

// faultedRun runs testdata/gpu/FILE on spec with its checkpoints under the scratch directory.
func faultedRun(t *testing.T, file, spec string, env ...string) (*e2e, result, faultResults) {
	t.Helper()
	e := newGPUE2E(t)
	e.env = append(e.env, "CKPT_ROOT="+e.path("ckpt"))
	e.env = append(e.env, env...)
	r := e.runGPUFile(file, spec)
	return e, r, e.faultResults()
}

// wantAllOK checks that every trial ended ok and that no attempt failed but by a GPU fault;
// it returns how many attempts a GPU fault ended.
func wantAllOK(t *testing.T, r result, res faultResults) int {
	t.Helper()
	r.wantCode(t, 0)
	faulted := 0
	for _, tr := range res.Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s (%s), want ok\n%v", tr.Name, tr.Status, tr.Reason, r)
		}
		for _, a := range tr.AttemptList {
			switch a.Class {
			case "gpu-fault":
				faulted++
			case "":
			default:
				t.Errorf("%s: attempt %d class %q (%s), want none failed but by a GPU fault", tr.Name, a.N, a.Class, a.Reason)
			}
		}
	}
	return faulted
}

// TestGPUFaultRequeuesTrials: an Xid 79 mid-sweep ends the trials on its GPU; each goes back
// to the line from its last checkpoint, its attempt classed gpu-fault, not counted against
// retries (it has none), and every trial finishes on the other GPU.
func TestGPUFaultRequeuesTrials(t *testing.T) {
	t.Parallel()
	e, r, res := faultedRun(t, "health-ckpt.yml", "32GiB,32GiB:xid=79@1s")
	if n := wantAllOK(t, r, res); n == 0 {
		t.Errorf("no attempt classed gpu-fault, want the one on GPU 1 when it fell off the bus\n%v", r)
	}
	if !strings.Contains(r.stdout, "GPU1 out of service (xid 79 (GPU has fallen off the bus)); requeued from its last checkpoint, not counted as a failure") {
		t.Errorf("want the requeue said\n%v", r)
	}
	if res.FailureClasses["gpu-fault"] == 0 {
		t.Errorf("failure_classes = %v, want gpu-fault counted", res.FailureClasses)
	}
	var h gpuHealth
	e.readJSON("results.json", &h)
	if len(h.GPUs) != 2 || h.GPUs[0].Health != "ok" || len(h.GPUs[0].Faults) != 0 || h.GPUs[1].Health != "out of service" {
		t.Fatalf("results gpus = %+v, want GPU 0 ok, GPU 1 out of service", h.GPUs)
	}
	if f := h.GPUs[1].Faults; len(f) != 1 || f[0].Kind != "xid" || f[0].Xid != 79 || f[0].Action != "out of service" ||
		f[0].Resolution != "contact support" || f[0].Seen.IsZero() || f[0].Fault != "xid 79 (GPU has fallen off the bus)" {
		t.Errorf("GPU 1 faults = %+v, want Xid 79 seen, out of service", f)
	}
}

// TestGPUMemoryErrorRequeuesTrials: after a memory error (Xid 48) the trials on its GPU end
// at once, go back to the line from their last copy, class gpu-fault, and finish on the other.
func TestGPUMemoryErrorRequeuesTrials(t *testing.T) {
	t.Parallel()
	_, r, res := faultedRun(t, "health-ckpt.yml", "32GiB,32GiB:xid=48@1s")
	if n := wantAllOK(t, r, res); n == 0 {
		t.Errorf("no attempt classed gpu-fault\n%v", r)
	}
	if !strings.Contains(r.stdout, "GPU1 out of service (xid 48 (double bit ECC error)); requeued from its last checkpoint") {
		t.Errorf("want the requeue said\n%v", r)
	}
}

// TestGPUFaultRequeuesPlainTrials: trials without checkpoint: that a fault ends go back to
// the line from their start, class gpu-fault, and finish on the other GPU.
func TestGPUFaultRequeuesPlainTrials(t *testing.T) {
	t.Parallel()
	_, r, res := faultedRun(t, "health-plain.yml", "32GiB,32GiB:xid=79@1s", "HOLD=2s")
	if n := wantAllOK(t, r, res); n == 0 {
		t.Errorf("no attempt classed gpu-fault\n%v", r)
	}
	if !strings.Contains(r.stdout, "requeued from its start, not counted as a failure") {
		t.Errorf("want the requeue from the start said\n%v", r)
	}
}

// TestGPUPendingRetirementPausesTrials: pages pending retirement end no process: the trial on
// that GPU is paused at its next kept copy and resumed on the other GPU, where every trial
// ends; nothing fails.
func TestGPUPendingRetirementPausesTrials(t *testing.T) {
	t.Parallel()
	e, r, res := faultedRun(t, "health-ckpt.yml", "32GiB,32GiB:pending-retirement@1s", "STEPS=8")
	if n := wantAllOK(t, r, res); n != 0 {
		t.Errorf("%d attempts classed gpu-fault, want none: the trial is paused at its copy\n%v", n, r)
	}
	if !strings.Contains(r.stdout, "GPU1 out of service: pages pending retirement") ||
		!strings.Contains(r.stdout, "(its kept checkpoint): GPU1 out of service: pages pending retirement") {
		t.Errorf("want the GPU out of service and a trial paused said\n%v", r)
	}
	for _, tr := range e.gpuResults("results.json").Tasks {
		if len(tr.Devices) != 1 || !strings.HasPrefix(tr.Devices[0], "GPU-fake-0-") {
			t.Errorf("%s ended on %v, want GPU 0", tr.Name, tr.Devices)
		}
	}
}

// TestGPUPendingRetirementStopsPlacements: a GPU with pages pending retirement before the
// first trial takes none; every trial runs on the other.
func TestGPUPendingRetirementStopsPlacements(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("health-plain.yml", "32GiB:pending-retirement@0s,32GiB")
	r.wantCode(t, 0)
	for _, tr := range e.gpuResults("results.json").Tasks {
		if tr.Status != "ok" || len(tr.Devices) != 1 || !strings.HasPrefix(tr.Devices[0], "GPU-fake-1-") {
			t.Errorf("%s: %s on %v, want ok on GPU 1", tr.Name, tr.Status, tr.Devices)
		}
	}
}

// TestGPUApplicationXidRecorded: an Xid 13 is said and recorded, and its GPU stays in
// service: the trials run on it and end ok.
func TestGPUApplicationXidRecorded(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("health-plain.yml", "32GiB:xid=13@0s")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "GPU0: xid 13 (Graphics Engine Exception) (NVIDIA: restart the application): recorded; the GPU stays in service") {
		t.Errorf("want the Xid said\n%v", r)
	}
	for _, tr := range e.gpuResults("results.json").Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s (%s), want ok", tr.Name, tr.Status, tr.Reason)
		}
	}
	var h gpuHealth
	e.readJSON("results.json", &h)
	if len(h.GPUs) != 1 || h.GPUs[0].Health != "faults recorded" || len(h.GPUs[0].Faults) != 1 || h.GPUs[0].Faults[0].Action != "recorded" {
		t.Errorf("results gpus = %+v, want GPU 0's Xid 13 recorded", h.GPUs)
	}
}

// TestEveryGPUOutOfServiceEndsRun: with every GPU out of service the run ends non-zero,
// saying why; its trials are not failed by it, and their checkpoints stay kept.
func TestEveryGPUOutOfServiceEndsRun(t *testing.T) {
	t.Parallel()
	_, r, res := faultedRun(t, "health-ckpt.yml", "32GiB:xid=79@1s")
	r.wantCode(t, 1)
	if !strings.Contains(r.stdout+r.stderr, "every GPU is out of service (GPU0: xid 79 (GPU has fallen off the bus))") {
		t.Errorf("want the reason said\n%v", r)
	}
	if res.Status == "ok" {
		t.Errorf("run status %q, want not ok", res.Status)
	}
	for _, tr := range res.Tasks {
		if tr.Status == "failed" {
			t.Errorf("%s: failed (%s), want stopped or skipped: the GPU failed, not the trial", tr.Name, tr.Reason)
		}
	}
}

// TestGPUMemoryErrorDropsLaterCopies: after a memory error (Xid 48) no copy of a checkpoint
// made after it is kept: the trial on its GPU, which saved steps after the fault until
// runall's health read stopped it, resumes on the other GPU from a step it saved before the
// fault, not from its newest.
func TestGPUMemoryErrorDropsLaterCopies(t *testing.T) {
	t.Parallel()
	e, r, res := faultedRun(t, "health-distrust.yml", "32GiB,32GiB:xid=48@1s")
	if n := wantAllOK(t, r, res); n == 0 {
		t.Fatalf("no attempt classed gpu-fault\n%v", r)
	}
	due := fakeFaultDue(t, e)
	resumed := 0
	for _, i := range []string{"1", "2"} {
		saved := map[string]int64{} // step → when its attempt saved it, the latest attempt's
		var after []string          // steps saved after the fault, before the next start
		for _, l := range lines(e.read(filepath.Join("ckpt", i+".log"))) {
			f := strings.Fields(l)
			switch {
			case len(f) == 3 && f[0] == "save":
				ns, _ := strconv.ParseInt(f[2], 10, 64)
				saved[f[1]] = ns
				if ns > due {
					after = append(after, f[1])
				}
			case len(f) == 2 && f[0] == "start" && f[1] != "0":
				resumed++
				if at, ok := saved[f[1]]; !ok || at > due {
					t.Errorf("t%s resumed from step %s, saved at %d (%v), after the fault at %d\n%v", i, f[1], at, ok, due, r)
				}
				if len(after) > 0 && slices.Contains(after, f[1]) {
					t.Errorf("t%s resumed from step %s, which it saved after the fault", i, f[1])
				}
			}
		}
	}
	if resumed == 0 && !strings.Contains(r.stdout, "the copies kept after the fault are dropped: none was kept before it") {
		t.Errorf("no trial resumed after the fault\n%v", r)
	}
}

// fakeFaultDue is when the fault armed in e's simulated GPUs falls due, in Unix ns.
func fakeFaultDue(t *testing.T, e *e2e) int64 {
	t.Helper()
	for _, kv := range e.env {
		if dir, ok := strings.CutPrefix(kv, "RUNALL_FAKE_GPU_STATE="); ok {
			b, err := os.ReadFile(filepath.Join(dir, "faults"))
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(b)) // "<device> <kind> <xid> <due in Unix ns>"
			if len(f) < 4 {
				t.Fatalf("faults: %q", b)
			}
			due, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return due
		}
	}
	t.Fatal("no RUNALL_FAKE_GPU_STATE")
	return 0
}
