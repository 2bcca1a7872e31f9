package history

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRateAloneKept: a task's rate alone survives a save and a load by its key, as its
// duration does, is found only for the GPU model it was measured on, and is dropped once no
// task of the file has that key.
func TestRateAloneKept(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	logs := filepath.Join(dir, "logs")
	p := loadPlan(t, dir, sweepFile)
	trial := p.Tasks[1].Parallel[0]
	h := Load(logs, p)
	h.SetRateAlone(trial.Key, trial.Name, "NVIDIA H100 80GB HBM3", 12.5)
	h.SetRateAlone(p.Tasks[1].Parallel[1].Key, "no rate", "NVIDIA H100 80GB HBM3", 0)
	if err := h.Save(); err != nil {
		t.Fatal(err)
	}
	h = Load(logs, loadPlan(t, dir, sweepFile))
	if r, ok := h.RateAlone(trial.Key, "NVIDIA H100 80GB HBM3"); !ok || r != 12.5 {
		t.Errorf("rate alone after a load: %v %v, want 12.5", r, ok)
	}
	if r, ok := h.RateAlone(trial.Key, "NVIDIA A100-SXM4-40GB"); ok {
		t.Errorf("a rate alone measured on an H100 was found for an A100: %v", r)
	}
	if r, ok := h.RateAlone(p.Tasks[1].Parallel[1].Key, "NVIDIA H100 80GB HBM3"); ok {
		t.Errorf("a rate of 0 was kept: %v", r)
	}
	renamed := loadPlan(t, dir, strings.Replace(sweepFile, "train --seed", "train2 --seed", 1))
	if r, ok := Load(logs, renamed).RateAlone(trial.Key, "NVIDIA H100 80GB HBM3"); ok {
		t.Errorf("a rate alone outlived its task: %v", r)
	}
}
