package main_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runall/runall/internal/eventually"
)

// stepsFile is a trial with checkpoint: that saves step 1, then each next step only once the
// test creates next-N, saying each copy whole (runall-checkpoint step=N); on SIGTERM it
// writes the step it had saved to term, and ends.
const stepsFile = `tasks:
  - name: sweep
    parallel-tasks:
      - name: trial
        checkpoint: ckpt
        cmd: |
          mkdir -p ckpt
          s=0
          trap 'echo "$s" > term; exit 143' TERM
          while true; do
            s=$((s+1)); echo "$s" > ckpt/step; echo "runall-checkpoint step=$s"
            while [ ! -f "next-$s" ]; do sleep 0.05; done
          done
`

// keptStep is the step of the trial's newest copy kept under the log directory; -1: none.
func keptStep(t *testing.T, e *e2e) int {
	t.Helper()
	step := -1
	_ = filepath.WalkDir(e.path("logs", "state", "checkpoints"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "manifest.json" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var m struct{ Step int }
		if json.Unmarshal(data, &m) == nil {
			step = max(step, m.Step)
		}
		return nil
	})
	return step
}

// TestGraceCheckpointKeepsNextCopy (issue 46, point 3): with --grace-checkpoint, SIGTERM
// first lets a trial with checkpoint: keep its next copy, and stops it then; without it,
// the trial is stopped at once, at the copy it had.
func TestGraceCheckpointKeepsNextCopy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		flags    []string
		wantTerm string // the step the trial had saved when SIGTERM reached it
	}{
		{"off", nil, "1"},
		{"on", []string{"--grace-checkpoint"}, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			if err := os.WriteFile(e.path("tasks.yml"), []byte(stepsFile), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--log-dir", "logs", "--results", "results.json", "--grace", "60s"}, tc.flags...)
			p := e.start(append(args, e.path("tasks.yml"))...)
			eventually.True(t, "the copy of step 1 to be kept", func() bool { return keptStep(t, e) == 1 })
			p.signal(syscall.SIGTERM)
			if tc.flags != nil {
				p.waitOutput("waiting up to 1m0s for the next checkpoint of 1 trial(s)") // step 2's
			} else {
				eventually.True(t, "the trial to be stopped", func() bool { return e.exists("term") })
			}
			// The trial saves step 2 if it is still running: with the flag it is, and its
			// copy of step 2 is what it is stopped at.
			if err := os.WriteFile(e.path("next-1"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			r := p.wait()
			r.wantCode(t, 143)
			if got := strings.TrimSpace(e.read("term")); got != tc.wantTerm {
				t.Errorf("SIGTERM reached the trial at step %s, want %s\n%v", got, tc.wantTerm, r)
			}
			if tc.flags != nil {
				if got := keptStep(t, e); got != 2 {
					t.Errorf("kept step %d, want 2: the copy runall waited for\n%v", got, r)
				}
				if !strings.Contains(r.stdout, "checkpoint of step 2 kept: stopping it") {
					t.Errorf("runall did not say it stopped the trial at its new copy\n%v", r)
				}
			}
		})
	}
}
