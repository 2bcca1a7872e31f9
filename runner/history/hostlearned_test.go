package history

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHostLearned: a learned host need is kept across runs apart from the GPU need of the
// same group, and dropped, with a note, once no task of the file learns it.
func TestHostLearned(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	logs := filepath.Join(dir, "logs")
	file := strings.Replace(sweepFile, "    gpu-memory: auto\n", "    gpu-memory: auto\n    memory: auto\n", 1)
	p := loadPlan(t, dir, file)
	trial := p.Tasks[1].Parallel[0]
	h := Load(logs, p)
	h.GPU().SetLearned(trial.Group, trial.Name, 7<<30)
	h.Host().SetLearned(trial.Host.Group, trial.Name, 448<<20)
	if err := h.Save(); err != nil {
		t.Fatal(err)
	}
	h = Load(logs, loadPlan(t, dir, file))
	if n, ok := h.Host().Learned(trial.Host.Group); !ok || n != 448<<20 {
		t.Errorf("host need after a reload: %d, %v", n, ok)
	}
	if n, _ := h.GPU().Learned(trial.Group); n != 7<<30 {
		t.Errorf("the GPU need became %d", n)
	}
	h = Load(logs, loadPlan(t, dir, sweepFile)) // memory: auto gone
	if _, ok := h.Host().Learned(trial.Host.Group); ok {
		t.Error("a host need no task learns any more was kept")
	}
	if notes := strings.Join(h.Notes(), "\n"); !strings.Contains(notes, `learned host memory 448 MiB of "trial 1" dropped`) {
		t.Errorf("notes: %s", notes)
	}
}
