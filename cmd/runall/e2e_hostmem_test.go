package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

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

// oomKilled lists the trials whose reason says the OOM killer took them, or that a SIGKILL
// came from outside.
func oomKilled(r resultsFile) []string {
	var out []string
	for _, tr := range r.Tasks {
		if strings.Contains(tr.Reason, "OOM killer") {
			out = append(out, tr.Name)
		}
	}
	return out
}

// TestHostMemoryNoAdmission: without host needs, runall starts all six at once and the
// kernel kills some of them; runall itself lives (its trials score higher for the OOM
// killer) and reports each as failed.
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
