package runner

import (
	"errors"
	"github.com/runall/runall/internal/claimstest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/claims"
)

// TestCollidingNamesOneBest: trials whose names would collide (asked values that repeat, a
// param not in the name) are named apart, and only the best of them, by ID, is best in the
// summary, the results and the report (all of them were marked best).
func TestCollidingNamesOneBest(t *testing.T) {
	for _, tc := range []struct {
		name, trials string
		want         []string // the trials' names
	}{
		{"a param not in the name", `
      - name: lr=<lr>
        cmd: echo "runall-metric acc=1"
        env: {SEED: "<seed>"}
        matrix: {lr: ["0.1"], seed: ["1", "2"]}`, []string{"lr=0.1 [seed=1]", "lr=0.1 [seed=2]"}},
		{"asked values that repeat", `
      - name: lr=<lr>
        cmd: echo "runall-metric acc=1"
        search:
          ask: 'n=$(flock asked.lock sh -c "n=\$(cat asked 2>/dev/null || echo 0); echo \$((n+1)) > asked; echo \$n"); echo "{\"number\": $n, \"params\": {\"lr\": \"0.1\"}}"'
          tell: 'true'
        trials: 3`, []string{"lr=0.1", "lr=0.1 [trial=1]", "lr=0.1 [trial=2]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, out, err := runFile(t, `
config:
  max-parallel-commands: 1
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:`+tc.trials+"\n", Options{})
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var names []string
			for _, tr := range res.Tasks {
				names = append(names, tr.Name)
			}
			if strings.Join(names, "|") != strings.Join(tc.want, "|") {
				t.Errorf("trials %q, want %q", names, tc.want)
			}
			if res.BestID != res.Tasks[0].ID || res.Best != tc.want[0] {
				t.Errorf("best %q (id %d), want the first, %q (id %d)", res.Best, res.BestID, tc.want[0], res.Tasks[0].ID)
			}
			if n := strings.Count(out, "(best)"); n != 1 {
				t.Errorf("the summary marks %d trials best, want 1\n%s", n, out)
			}
			html, err := os.ReadFile(filepath.Join(res.LogDir, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(regexp.MustCompile(`<tr[^>]* class="best">`).FindAllIndex(html, -1)); n != 1 {
				t.Errorf("the report marks %d rows best, want 1", n)
			}
		})
	}
}

// TestClaimsTrialIdentity: under --claims, a file whose trial differs only in its env: or
// timeout: is another sweep, refused before any of its trials runs (it was taken for the
// same sweep: a trial ran with another data set and was recorded as the sweep's).
func TestClaimsTrialIdentity(t *testing.T) {
	const file = `
tasks:
  - name: sweep
    parallel-tasks:
      - name: train
        cmd: echo "$DATA" >> ran
        env: {DATA: /data/a}
        timeout: 1h
`
	for _, other := range []string{strings.Replace(file, "/data/a", "/data/b", 1), strings.Replace(file, "1h", "2h", 1)} {
		store := claimstest.NewMem()
		if _, out, err := runFile(t, file, Options{Claims: ClaimsOptions{Store: store, Lease: time.Minute}}); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		_, out, err := runFile(t, other, Options{Claims: ClaimsOptions{Store: store, Lease: time.Minute}})
		if !errors.Is(err, claims.ErrOtherSweep) {
			t.Errorf("a file whose trial differs joined the sweep: %v\n%s", err, out)
		}
	}
}
