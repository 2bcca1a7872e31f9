package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
	"github.com/runall/runall/runner/plan"
)

// freshTrials are trials a and b, one at a time, that save steps 1 to 3 into their checkpoint
// and say so; a resumed one says from which step. The trial $HOLD touches $TRIGGER after its
// step 1 and waits there, for the test to stop the run.
const freshTrials = `
config: {max-parallel-commands: 1, order: file}
tasks:
  - name: sweep
    parallel-tasks:
      - name: <n>
        matrix: {n: [a, b]}
        checkpoint: ck/<n>
        cmd: |
          d=ck/<n>; mkdir -p $d; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat $d/step); echo "resumed at $i"; fi
          while [ $i -lt 3 ]; do
            i=$((i+1)); echo $i > $d/step.tmp; mv $d/step.tmp $d/step; echo runall-checkpoint step=$i
            if [ "$HOLD" = <n> ]; then touch "$TRIGGER"; sleep 30; fi
          done
`

// runIn runs tasks.yml of dir with its log directory there, stopped by SIGTERM once the
// file trigger exists when hold names a trial; it returns the output.
func runIn(t *testing.T, dir, hold string, fresh bool) string {
	t.Helper()
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	trigger := filepath.Join(dir, "trigger")
	_ = os.Remove(trigger)
	sigs := make(chan os.Signal, 1)
	if hold != "" {
		go func() {
			eventually.True(t, hold+" to hold", func() bool { _, err := os.Stat(trigger); return err == nil })
			sigs <- syscall.SIGTERM
		}()
	}
	var out bytes.Buffer
	opts := Options{Signals: sigs, Grace: 5 * time.Second, Fresh: fresh,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HOLD=" + hold, "TRIGGER=" + trigger}}
	opts.Output.Stdout = &out
	opts.Record.LogDir = filepath.Join(dir, "logs")
	_, _ = Run(p, opts)
	return out.String()
}

// TestFreshStoppedIsRemembered (issue 42, point 3): a --fresh run that was stopped is
// remembered: the next run, without --fresh, says the sweep is half fresh and finishes it
// fresh. The trial the fresh run started goes on from the copy it kept; the one it never
// reached starts over, not from the copy an earlier run kept of it. Once a run finished
// the sweep, it is fresh through and no later run says so.
func TestFreshStoppedIsRemembered(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(freshTrials), 0o644); err != nil {
		t.Fatal(err)
	}
	runIn(t, dir, "b", false)       // a runs to its end; b keeps step 1, stopped
	out := runIn(t, dir, "a", true) // --fresh: a starts over, stopped at its step 1; b never starts
	if strings.Contains(out, "[a] resumed at") {
		t.Fatalf("--fresh resumed a\n%s", out)
	}
	out = runIn(t, dir, "", false)
	if !strings.Contains(out, "the sweep is half fresh: run ") {
		t.Errorf("the run after a stopped --fresh one does not say the sweep is half fresh\n%s", out)
	}
	if !strings.Contains(out, "[a] resumed at 1") {
		t.Errorf("a did not go on from the copy the --fresh run kept\n%s", out)
	}
	if strings.Contains(out, "[b] resumed at") {
		t.Errorf("b resumed from the copy kept before the --fresh run: the sweep is not finished fresh\n%s", out)
	}
	if out := runIn(t, dir, "", false); strings.Contains(out, "half fresh") {
		t.Errorf("a run after the sweep was finished fresh still says it is half fresh\n%s", out)
	}
}
