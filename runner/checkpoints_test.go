package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/plan"
)

// beginOne readies one attempt of trial a, whose checkpoint: is ck under work, with its
// copies kept under store; it returns what the trial was told and begin's error.
func beginOne(t *testing.T, work, store string, fresh bool, manifest string) (string, error) {
	t.Helper()
	task := &plan.Task{Name: "a", Key: "k1", Checkpoint: &plan.Checkpoint{Dir: "ck"}}
	c := newCheckpoints(checkpointOptions{plan: &plan.Plan{Tasks: []*plan.Task{{Name: "sweep", Parallel: []*plan.Task{task}}}}, local: store, runID: "r1", fresh: fresh,
		guard: plan.NewCheckpointGuard(nil, work, filepath.Join(work, ".runall", "logs"))})
	if manifest != "" {
		if err := os.MkdirAll(filepath.Join(store, plan.Key(task)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store, plan.Key(task), "manifest.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var said []string
	a, _, err := c.Begin(context.Background(), task, work, nil, 1, func(s string) { said = append(said, s) }, nil)
	if a != nil {
		c.End(task, a, false)
	}
	return strings.Join(said, "\n"), err
}

// TestUncopiedDirectoryLeftAndSaid (issue 34, rule 1, fourth bullet): a checkpoint
// directory runall keeps no copy of (a rerun after a SIGKILL before any copy landed) is
// left as it is, and the trial is told so and how to start it over; --fresh empties it.
func TestUncopiedDirectoryLeftAndSaid(t *testing.T) {
	work, store := t.TempDir(), t.TempDir()
	own := filepath.Join(work, "ck", "step-14.pt")
	if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, []byte("the script's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	said, err := beginOne(t, work, store, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(own); err != nil {
		t.Fatalf("the script's own step-14 file was deleted: %v", err)
	}
	for _, want := range []string{"no copy of ck is kept", "left as they are", "delete " + store, "--fresh"} {
		if !strings.Contains(said, want) {
			t.Errorf("the trial was not told %q:\n%s", want, said)
		}
	}
	if _, err := beginOne(t, work, store, true, ""); err != nil {
		t.Fatal(err)
	}
	if n := checkpoint.Holds(filepath.Join(work, "ck")); n != 0 {
		t.Errorf("--fresh left %d files", n)
	}
}

// TestFailedRestoreSaysHow (issue 34, point 6): a restore that fails says how to start the
// trial over: which folder to delete, or --fresh.
func TestFailedRestoreSaysHow(t *testing.T) {
	work, store := t.TempDir(), t.TempDir()
	_, err := beginOne(t, work, store, false, `{"version": "../other", "writer": "w", "step": 3}`)
	if err == nil {
		t.Fatal("a manifest naming ../other was restored")
	}
	for _, want := range []string{"manifest.json", "not started fresh", "to start it over, delete " + filepath.Join(store, "a-k1"), "empty " + filepath.Join(work, "ck"), "--fresh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
