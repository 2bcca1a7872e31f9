package main_test

import (
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
