package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// These tests are not parallel: six trials of 400 MiB each, written page by page, load a
// small machine enough to upset the timing-sensitive GPU sharing tests that run in parallel
// after them.
//
// The Proof of host memory admission: a container (a memory cgroup the test makes) with a
// 1 GiB limit, and six trials that each take about 400 MiB of real host memory over two
// seconds, all allowed to run at once (max-parallel-commands: 6).
const (
	sweepLimit  = 1 << 30
	sweepTrials = 6
	sweepMiB    = 400
)

// hostSweep writes the sweep's task file with memory: set to need ("": none).
func (e *e2e) hostSweep(need string) string {
	e.t.Helper()
	mem := ""
	if need != "" {
		mem = "    memory: " + need + "\n"
	}
	yml := fmt.Sprintf(`config:
  max-parallel-commands: %d
  stop-on-failure: false
  oom-retries: 3
tasks:
  - name: sweep
%s    parallel-tasks:
      - name: trial <replace>
        cmd: python3 %s --mib %d --over 2 --hold 2
        for-each: [1, 2, 3, 4, 5, 6]
`, sweepTrials, mem, testdata("hostalloc.py"), sweepMiB)
	if err := os.WriteFile(e.path("sweep.yml"), []byte(yml), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return e.path("sweep.yml")
}

// oomKilled lists the trials whose reason says the kernel's OOM killer took them: runall
// saw the container's OOM kill counter rise while they ran.
func oomKilled(r resultsFile) []string {
	var out []string
	for _, tr := range r.Tasks {
		if strings.Contains(tr.Reason, "killed by the kernel's OOM killer: the container's memory limit is 1.0 GiB") {
			out = append(out, tr.Name)
		}
	}
	return out
}

// TestHostMemoryNoAdmission: without host needs, runall starts all six at once and the
// kernel kills some of them; runall itself lives (its trials score higher for the OOM
// killer) and reports each as failed, killed by the OOM killer (the cgroup's counter rose).
func TestHostMemoryNoAdmission(t *testing.T) {
	cg := newMemCgroup(t, sweepLimit)
	e := newE2E(t)
	r := e.runIn(cg, "--no-gpu", "--log-dir", "logs", "--results", "results.json", e.hostSweep(""))
	kills := cg.oomKills(t)
	res := e.results()
	killed := oomKilled(res)
	t.Logf("without host needs: the kernel's OOM killer struck %d times; %d of %d trials failed as killed: %q",
		kills, len(killed), sweepTrials, killed)
	if kills == 0 || len(killed) == 0 {
		t.Fatalf("six trials of %d MiB in a 1 GiB container, and no OOM kill (%d counted)\n%v", sweepMiB, kills, r)
	}
	r.wantCode(t, 1)
	if ok := len(res.Tasks) - len(killed); ok < 1 {
		t.Errorf("every trial was killed: the ones left should have had room to finish\n%v", r)
	}
}

// TestResourcesInCgroup: runall resources shows the limit of the container it runs in.
func TestResourcesInCgroup(t *testing.T) {
	cg := newMemCgroup(t, 768<<20)
	e := newE2E(t)
	r := e.runIn(cg, "resources", "--fake-gpus", "16GiB")
	r.wantCode(t, 0)
	for _, want := range []string{"HOST MEMORY  (cgroup ", cg.dir, "limit      768 MiB\n", "oom kills  0\n", "GPU0  Simulated GPU: 16.0 GiB total"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q\n%v", want, r)
		}
	}
	r = e.runIn(cg, "resources", "--json")
	var out struct {
		Host struct {
			Limit   uint64 `json:"limit_bytes"`
			Limited bool   `json:"limited"`
			Room    uint64 `json:"room_bytes"`
		} `json:"host_memory"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Host.Limit != 768<<20 || !out.Host.Limited || out.Host.Room == 0 || out.Host.Room >= 768<<20 {
		t.Errorf("json %+v (%v)\n%v", out, err, r)
	}
}

// TestHostMemoryDeclared: with memory: 450MiB, runall starts only as many as fit in the
// limit, and none is killed.
func TestHostMemoryDeclared(t *testing.T) {
	cg := newMemCgroup(t, sweepLimit)
	e := newE2E(t)
	r := e.runIn(cg, "--no-gpu", "--output", "plain", "--log-dir", "logs", "--results", "results.json", e.hostSweep("450MiB"))
	r.wantCode(t, 0)
	if kills := cg.oomKills(t); kills != 0 {
		t.Errorf("the OOM killer struck %d times with host needs declared\n%v", kills, r)
	}
	res := e.results()
	for _, tr := range res.Tasks {
		if strings.HasPrefix(tr.Name, "trial") {
			tr.want(t, "ok", 0, 1)
		}
	}
	if !strings.Contains(r.stdout, "waiting: needs 450 MiB of host memory; the container has") {
		t.Errorf("no trial waited for host memory: six of 450 MiB cannot run at once in 1 GiB\n%v", r)
	}
}

// TestHostMemoryAuto: with memory: auto, the first trial runs alone and teaches the rest
// its need; none is killed. The next run starts with the need it learned.
func TestHostMemoryAuto(t *testing.T) {
	cg := newMemCgroup(t, sweepLimit)
	e := newE2E(t)
	r := e.runIn(cg, "--no-gpu", "--output", "plain", "--log-dir", "logs", "--results", "results.json", e.hostSweep("auto"))
	r.wantCode(t, 0)
	if kills := cg.oomKills(t); kills != 0 {
		t.Errorf("the OOM killer struck %d times with memory: auto\n%v", kills, r)
	}
	if !strings.Contains(r.stdout, `to measure the group's host memory`) {
		t.Errorf("no trial waited for the first to be measured\n%v", r)
	}
	res := e.results()
	var learned uint64
	for _, n := range res.LearnedHostMemory {
		learned = n
	}
	if learned < sweepMiB<<20 || learned > 2*sweepMiB<<20 {
		t.Errorf("learned %d MiB, want about %d (+5%%)\n%v", learned>>20, sweepMiB, r)
	}
	r = e.runIn(cg, "--no-gpu", "--output", "plain", "--log-dir", "logs", "--results", "results.json", e.hostSweep("auto"))
	r.wantCode(t, 0)
	if strings.Contains(r.stdout, `to measure the group's host memory`) {
		t.Errorf("the second run learned again instead of starting with the need it had learned\n%v", r)
	}
}

// TestHostMemoryUnderDeclared: trials that declare 100MiB and take 400 are killed by the
// OOM killer; runall recognises each kill, requeues the trial with a raised need, and all
// finish.
func TestHostMemoryUnderDeclared(t *testing.T) {
	cg := newMemCgroup(t, sweepLimit)
	e := newE2E(t)
	r := e.runIn(cg, "--no-gpu", "--output", "plain", "--log-dir", "logs", "--results", "results.json", e.hostSweep("100MiB"))
	kills := cg.oomKills(t)
	r.wantCode(t, 0)
	if kills == 0 {
		t.Fatalf("no OOM kill: the under-declared sweep should have hit the limit\n%v", r)
	}
	if !strings.Contains(r.stdout, "killed by the kernel's OOM killer: the container's memory limit is 1.0 GiB, in use ") ||
		!strings.Contains(r.stdout, "requeued after the OOM killer took it; now needs ") {
		t.Errorf("the kills were not recognised and requeued\n%v", r)
	}
	requeues := 0
	for _, tr := range e.results().Tasks {
		if strings.HasPrefix(tr.Name, "trial") {
			if tr.Status != "ok" {
				t.Errorf("%s: %s (%s)", tr.Name, tr.Status, tr.Reason)
			}
			requeues += tr.OOMRequeues
		}
	}
	if requeues == 0 {
		t.Errorf("the OOM killer struck %d times and no trial was requeued\n%v", kills, r)
	}
	t.Logf("under-declared: %d OOM kills, %d requeues, all finished", kills, requeues)
}

// TestHostMemoryNeverFits: a trial whose need is more than the limit fails at once, and
// check --simulate says so before the run.
func TestHostMemoryNeverFits(t *testing.T) {
	cg := newMemCgroup(t, sweepLimit)
	e := newE2E(t)
	file := e.hostSweep("2GiB")
	// check --simulate plans for the container it runs in, and says so before any run.
	r := e.runIn(cg, "check", "--simulate", "--duration", "1s", file)
	if r.code == 0 || !strings.Contains(r.stderr, `"trial 1" needs more host memory than the container's limit: needs 2.0 GiB, the limit is 1.0 GiB`) {
		t.Errorf("check --simulate did not fail the need beyond the limit\n%v", r)
	}
	r = e.runIn(cg, "--no-gpu", "--output", "plain", "--log-dir", "logs", "--results", "results.json", file)
	r.wantCode(t, 1)
	want := "needs more host memory than the container's limit: needs 2.0 GiB, the container's memory limit is 1.0 GiB"
	for _, tr := range e.results().Tasks {
		if strings.HasPrefix(tr.Name, "trial") && (tr.Status != "failed" || !strings.Contains(tr.Reason, want) || tr.Attempts != 0) {
			t.Errorf("%s: %s after %d attempts (%s), want failed at once saying %q", tr.Name, tr.Status, tr.Attempts, tr.Reason, want)
		}
	}
}
