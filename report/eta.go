package report

import (
	"slices"
	"time"

	"github.com/runall/runall/runner/results"
)

// eta estimates how long a running run has left: each trial that has not ended takes the
// median time of the trials that ended ok (a running one less what it ran already), spread
// over as many as run at once now. ok is false before any trial ended ok, or when none
// runs: there is nothing to go by.
func eta(tasks []results.Task, now time.Time) (left time.Duration, ok bool) {
	var ended []time.Duration
	for _, t := range tasks {
		if d := t.Duration(); t.Status == results.StatusOK && d > 0 {
			ended = append(ended, d)
		}
	}
	if len(ended) == 0 {
		return 0, false
	}
	slices.Sort(ended)
	median := ended[len(ended)/2]
	running := 0
	for _, t := range tasks {
		switch t.Status {
		case results.StatusRunning:
			running++
			left += max(median-now.Sub(t.StartedAt), 0)
		case results.StatusPending, results.StatusPaused:
			left += median
		}
	}
	if running == 0 {
		return 0, false
	}
	return left / time.Duration(running), true
}
