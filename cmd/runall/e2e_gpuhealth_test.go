package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGPUHealthColumn: faults a run injects into the simulated GPUs show in `runall gpus`,
// in its HEALTH column and its JSON, per GPU; a GPU without one is ok.
func TestGPUHealthColumn(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	const spec = "16GiB:pending-retirement@0s,16GiB:xid=79@0s,16GiB:xid=13@0s,16GiB"
	r := e.runGPU("gpus", "--fake-gpus", spec)
	r.wantCode(t, 0)
	if n := len(regexp.MustCompile(`(?m)^\d +GPU-fake-\d-\w+ +Simulated GPU +16\.0 GiB +0 B +16\.0 GiB +ok +`).FindAllString(r.stdout, -1)); n != 4 {
		t.Errorf("before a run armed them, want 4 GPUs ok (runall gpus arms nothing), got %d\n%v", n, r)
	}
	e.runGPUFile("health.yml", spec).wantCode(t, 0)

	r = e.runGPU("gpus", "--fake-gpus", "4x16GiB")
	r.wantCode(t, 0)
	for _, want := range []string{
		`(?m)^GPU +UUID +NAME +TOTAL +USED +FREE +HEALTH +UTIL +MPS$`,
		`(?m)^0 .* 16\.0 GiB +pages pending retirement +0% +none$`,
		`(?m)^1 .* 16\.0 GiB +xid 79 \(GPU has fallen off the bus\) +0% +none$`,
		`(?m)^2 .* 16\.0 GiB +xid 13 \(Graphics Engine Exception\) +0% +none$`,
		`(?m)^3 .* 16\.0 GiB +ok +0% +none$`,
	} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("no line matches %s\n%v", want, r)
		}
	}

	r = e.runGPU("gpus", "--fake-gpus", "4x16GiB", "--json")
	r.wantCode(t, 0)
	var out struct {
		GPUs []struct {
			Health struct {
				Status      string `json:"status"`
				XidsWatched bool   `json:"xids_watched"`
				Faults      []struct {
					Kind         string  `json:"kind"`
					Xid          uint64  `json:"xid"`
					At           *string `json:"at"`
					Resolution   string  `json:"resolution"`
					OutOfService bool    `json:"out_of_service"`
				} `json:"faults"`
			} `json:"health"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.GPUs) != 4 {
		t.Fatalf("runall gpus --json: %v\n%v", err, r)
	}
	f := out.GPUs[1].Health.Faults
	if len(f) != 1 || f[0].Kind != "xid" || f[0].Xid != 79 || f[0].Resolution != "contact support" || !f[0].OutOfService || f[0].At == nil {
		t.Errorf("gpu 1 faults = %+v, want Xid 79, contact support, out of service, with its time", f)
	}
	if f := out.GPUs[2].Health.Faults; len(f) != 1 || f[0].OutOfService || f[0].Resolution != "restart the application" {
		t.Errorf("gpu 2 faults = %+v, want Xid 13, an application's, in service", f)
	}
	if h := out.GPUs[3].Health; h.Status != "ok" || len(h.Faults) != 0 || !h.XidsWatched {
		t.Errorf("gpu 3 health = %+v, want ok", h)
	}
}

// TestFakeGPUFaultSpecRefused: a malformed fault in --fake-gpus is refused before anything
// runs, saying the form.
func TestFakeGPUFaultSpecRefused(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("health.yml", "16GiB:xid=79")
	r.wantCode(t, 2)
	if !regexp.MustCompile(`xid=79@30s`).MatchString(r.stderr) {
		t.Errorf("want the error to show the form xid=N@T\n%v", r)
	}
}

// TestGPUOutOfService: an Xid 79 injected mid-sweep takes its GPU out of service, said in
// the output; every trial placed after that runs on the other GPU, and every trial ends ok.
func TestGPUOutOfService(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	gate := e.path("gate")
	e.env = append(e.env, "GATE="+gate)
	p := e.start("--fake-gpus", "32GiB,32GiB:xid=79@1s", "--log-dir", "logs", "--results", "results.json",
		testdata(filepath.Join("gpu", "health-sweep.yml")))
	p.waitOutput("GPU1 out of service: xid 79 (GPU has fallen off the bus) (NVIDIA: contact support)")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	r.wantCode(t, 0)
	res := e.gpuResults("results.json")
	if res.Status != "ok" {
		t.Errorf("run status %q, want ok\n%v", res.Status, r)
	}
	after := 0
	for _, tr := range res.Tasks {
		if tr.Status != "ok" {
			t.Errorf("%s: %s (%s), want ok", tr.Name, tr.Status, tr.Reason)
		}
		if strings.HasPrefix(tr.Name, "after ") {
			after++
			if len(tr.Devices) != 1 || !strings.HasPrefix(tr.Devices[0], "GPU-fake-0-") {
				t.Errorf("%s ran on %v after GPU 1 went out of service, want GPU 0", tr.Name, tr.Devices)
			}
		}
	}
	if after != 4 {
		t.Errorf("%d trials after the fault in the results, want 4\n%v", after, r)
	}
}
