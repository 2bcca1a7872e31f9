package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// endsAtRung is a trial of n in 1..4 that reports acc = step·n for 2 steps and saves its step
// two seconds after each value (the rung's pause is asked meanwhile); after step 1 it says
// its save and waits (its pause stops it there), after step 2, its last, it exits at once:
// its script runs to its end as sha's rung at step 2 pauses it. A start from its checkpoint
// says so on its output.
const endsAtRung = `      - name: n=<n>
        matrix: {n: [1, 2, 3, 4]}
        checkpoint: ck/<n>
        cmd: |
          d=ck/<n>; mkdir -p $d; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat $d/step); echo "started again at $i"; fi
          while [ $i -lt 2 ]; do
            i=$((i+1)); echo runall-metric acc=$((i*<n>)); sleep 2; echo $i > $d/step.tmp; mv $d/step.tmp $d/step
            if [ $i -lt 2 ]; then echo runall-checkpoint step=$i; sleep 5; fi
          done
`

// TestSHANoRestartAfterLastStep (issue 42, point 6): sha does not start again a trial whose
// script already ran to its last step as its rung paused it: promoted, it ends ok at once
// (one start after its first, not two), and the output says why; the rung still prunes
// the other.
func TestSHANoRestartAfterLastStep(t *testing.T) {
	res, out := runSHA4(t, endsAtRung)
	got := byName(res)
	if n4 := got["n=4"]; n4.Status != results.StatusOK || n4.Attempts != 2 || n4.ExitCode != 0 || n4.Metrics["acc"] != 8 {
		t.Errorf("n=4: %s after %d attempts (exit %d, acc %v); want ok after one resume, acc 8\n%s", n4.Status, n4.Attempts, n4.ExitCode, n4.Metrics["acc"], out)
	}
	if strings.Contains(out, "[n=4] started again at 2") {
		t.Errorf("n=4 was started again after its script ran to its end\n%s", out)
	}
	if !strings.Contains(out, "n=4: not started again: its script ran to its end") {
		t.Errorf("the output does not say why n=4 was not started again\n%s", out)
	}
	if n3 := got["n=3"]; n3.Status != results.StatusPruned || !strings.Contains(n3.Reason, "at step 2") {
		t.Errorf("n=3: %s (%s); want pruned at the rung of step 2\n%s", n3.Status, n3.Reason, out)
	}
	noPaused(t, res, out)
}

// runSHA4 runs trials (parallel-tasks entries) under sha (grace 1, reduction 2, max 4), four
// at a time, and fails t unless the run ends ok.
func runSHA4(t *testing.T, trials string) (*results.Run, string) {
	t.Helper()
	res, out, err := runFile(t, `
config: {max-parallel-commands: 4, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: {method: sha, grace: 1, reduction: 2, max: 4}
    parallel-tasks:
`+trials, Options{Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return res, out
}
