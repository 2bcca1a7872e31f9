package report

import (
	"testing"
	"time"

	"github.com/runall/runall/runner/results"
)

// The run's ETA takes a running trial's time left from its progress where its output says
// it, and needs no ended trial then; a trial without progress still needs one.
func TestETAFromProgress(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	running := func(etaSeconds float64) results.Task {
		t := results.Task{Status: results.StatusRunning, StartedAt: now.Add(-time.Minute)}
		if etaSeconds > 0 {
			t.Progress = &results.Progress{Iter: 5, Of: 10, Rate: 1, Unit: "it", Source: "bar", ETASeconds: etaSeconds}
		}
		return t
	}
	done := results.Task{Status: results.StatusOK, StartedAt: now.Add(-5 * time.Minute), FinishedAt: now.Add(-time.Minute)}
	for _, c := range []struct {
		name           string
		tasks          []results.Task
		left           time.Duration
		ok, byProgress bool
	}{
		{"progress alone", []results.Task{running(30), running(10)}, 20 * time.Second, true, true},
		{"no progress, nothing ended", []results.Task{running(0)}, 0, false, false},
		{"progress and the median", []results.Task{done, running(30), running(0)}, (30*time.Second + 3*time.Minute) / 2, true, true},
		{"the median alone", []results.Task{done, running(0)}, 3 * time.Minute, true, false},
	} {
		left, ok, byProgress := eta(c.tasks, now)
		if left != c.left || ok != c.ok || byProgress != c.byProgress {
			t.Errorf("%s: %v %v %v, want %v %v %v", c.name, left, ok, byProgress, c.left, c.ok, c.byProgress)
		}
	}
}
