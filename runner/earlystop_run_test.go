package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestDivergedTrialPruned: with diverged-on: off, a trial that prints nan at every epoch is pruned under asha and
// under median, instead of keeping its room to the end; the trials with values run on.
func TestDivergedTrialPruned(t *testing.T) {
	for _, rule := range []string{"{method: asha, grace: 1, reduction: 2}", "{method: median, grace: 1, min-trials: 1}"} {
		t.Run(rule, func(t *testing.T) {
			res, out, err := runFile(t, `
config:
  max-parallel-commands: 3
  objective: {metric: val_loss, mode: min}
tasks:
  - name: sweep
    early-stop: `+rule+`
    diverged-on: off # the rule's own view of a NaN: diverged-on would end it first
    parallel-tasks:
      - name: good
        cmd: for i in 1 2 3 4 5 6 7 8 9 10; do echo "runall-metric val_loss=0.$((20-i))"; done
      - name: diverged
        cmd: for i in $(seq 100); do sleep 0.1; echo "runall-metric val_loss=nan"; done
`, Options{})
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			tasks := byName(res)
			if got := tasks["good"].Status; got != results.StatusOK {
				t.Errorf("good: %s, want ok", got)
			}
			if got := tasks["diverged"]; got.Status != results.StatusPruned || !strings.Contains(got.Reason, "no usable value (nan)") {
				t.Errorf("diverged: %s (%s), want pruned for its missing value\n%s", got.Status, got.Reason, out)
			}
		})
	}
}

// TestStopWhenWithSearch: stop-when ends a search: sweep as it ends a matrix: once a trial
// meets it, the sampler is asked for no more trials (all 10 ran).
func TestStopWhenWithSearch(t *testing.T) {
	res, out, err := runFile(t, `
config:
  max-parallel-commands: 1
  objective: {metric: acc, mode: max}
  stop-when: "acc >= 2"
tasks:
  - name: sweep
    parallel-tasks:
      - name: x=<x>
        cmd: echo "runall-metric acc=<x>"
        search:
          ask: 'n=$(flock asked.lock sh -c "n=\$(cat asked 2>/dev/null || echo 0); echo \$((n+1)) > asked; echo \$n"); echo "{\"number\": $n, \"params\": {\"x\": \"$n\"}}"'
          tell: 'true'
        trials: 10
`, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var ran []string
	for _, tr := range res.Tasks {
		if tr.Status == results.StatusOK {
			ran = append(ran, tr.Name)
		}
	}
	if len(ran) != 3 || !strings.Contains(res.Stopped, `stop-when "acc >= 2" was met by "x=2"`) {
		t.Errorf("ran %q, stopped %q; want x=0, x=1, x=2, stopped by x=2\n%s", ran, res.Stopped, out)
	}
	asked, _ := os.ReadFile(filepath.Join(res.LogDir, "..", "..", "asked"))
	if strings.TrimSpace(string(asked)) != "3" {
		t.Errorf("the sampler was asked %s times, want 3", asked)
	}
}
