package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

const sweepFile = `tasks:
  - name: setup
    cmd: 'true'
  - name: sweep
    gpu-memory: auto
    parallel-tasks:
      - name: trial <replace>
        cmd: train --seed <replace>
        for-each: [1, 2]
`

func loadPlan(t *testing.T, dir, content string, tags ...string) *plan.Plan {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir, Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHistoryKeys: what runs of a file record is kept by the task's name path and command,
// so edits elsewhere keep it and a rename drops it, with a note.
func TestHistoryKeys(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // HistoryPath makes the file's path absolute
	logs := filepath.Join(dir, "logs")
	p := loadPlan(t, dir, sweepFile)
	trial := p.Tasks[1].Parallel[0]
	h := Load(logs, p)
	h.GPU().SetLearned(trial.Group, trial.Name, 7<<30)
	h.Record(&results.Run{Tasks: []results.Task{{ID: trial.ID, Status: results.StatusOK,
		StartedAt: time.Unix(0, 0), FinishedAt: time.Unix(42, 0)}}}, map[int]*plan.Task{trial.ID: trial})
	if err := h.Save(); err != nil {
		t.Fatal(err)
	}

	edited := loadPlan(t, dir, "# a comment\n"+strings.Replace(sweepFile, "tasks:\n", "tasks:\n  - name: more setup\n    cmd: 'true'\n", 1))
	trial2 := edited.Tasks[2].Parallel[0]
	h = Load(logs, edited)
	if n, ok := h.GPU().Learned(trial2.Group); !ok || n != 7<<30 {
		t.Errorf("after lines inserted above: learned %d %v, want 7 GiB", n, ok)
	}
	if d, ok := h.Duration(trial2.Key); !ok || d != 42*time.Second {
		t.Errorf("after lines inserted above: duration %v %v, want 42s", d, ok)
	}
	if len(h.Notes()) != 0 {
		t.Errorf("notes: %q", h.Notes())
	}

	filtered := loadPlan(t, dir, strings.Replace(sweepFile, "name: sweep", "name: renamed", 1), "nothing")
	if h = Load(logs, filtered); len(h.Notes()) != 0 {
		t.Errorf("with --tags, what the filter left out is kept, without a note: %q", h.Notes())
	}

	renamed := loadPlan(t, dir, strings.Replace(sweepFile, "name: sweep", "name: renamed", 1))
	h = Load(logs, renamed)
	if _, ok := h.GPU().Learned(renamed.Tasks[1].Parallel[0].Group); ok {
		t.Error("after a rename: the learned need was kept")
	}
	if notes := strings.Join(h.Notes(), "\n"); !strings.Contains(notes, `"trial 1" dropped`) {
		t.Errorf("after a rename: notes %q, want one saying the learned need of \"trial 1\" was dropped", notes)
	}
}

// TestHistoryMigratesVersion1 reads the state file of the runall before stable keys:
// durations by task name, learned needs by the file:line:col of the block.
func TestHistoryMigratesVersion1(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	logs := filepath.Join(dir, "logs")
	p := loadPlan(t, dir, sweepFile)
	old := `{"durations": {"trial 2": 12.5, "gone": 1}, "learned": {"tasks.yml:4:5": 8589934592}}`
	path := HistoryPath(logs, p.File)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	h := Load(logs, p)
	trial := p.Tasks[1].Parallel[1]
	if n, ok := h.GPU().Learned(trial.Group); !ok || n != 8<<30 {
		t.Errorf("learned %d %v, want the 8 GiB of the block at 4:5", n, ok)
	}
	if d, ok := h.Duration(trial.Key); !ok || d != 12500*time.Millisecond {
		t.Errorf("duration %v %v, want 12.5s", d, ok)
	}
}
