package runner

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestDivergedOutOfItsRound (issue 44, point 4): under sha, a trial whose loss goes NaN
// before its round's step ends at once as diverged and is out of its round: the round is
// decided among the others (it does not wait for the diverged one), and the run ends 0.
func TestDivergedOutOfItsRound(t *testing.T) {
	trials := strings.Replace(endsAtRung, "cmd: |\n", "cmd: |\n          if [ <n> = 4 ]; then echo runall-metric loss=nan; sleep 30; fi\n", 1)
	res, out := runSHA4(t, trials)
	got := byName(res)
	if n4 := got["n=4"]; n4.Status != results.StatusDiverged || n4.Attempts != 1 || !strings.Contains(n4.Reason, "loss was not a number") {
		t.Errorf("n=4: %s after %d attempts (%s); want diverged at its first\n%s", n4.Status, n4.Attempts, n4.Reason, out)
	}
	if n3 := got["n=3"]; n3.Status != results.StatusOK || n3.Metrics["acc"] != 6 {
		t.Errorf("n=3: %s (acc %v); want the best left, promoted and ok\n%s", n3.Status, n3.Metrics["acc"], out)
	}
	if res.Status != results.StatusOK {
		t.Errorf("run: %s, want ok: a diverged trial is not a failure of the run\n%s", res.Status, out)
	}
	noPaused(t, res, out)
}
