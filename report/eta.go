package report

import (
	"slices"
	"time"

	"github.com/runall/runall/runner/results"
)

// eta estimates how long a running run has left: a running trial whose output says its
// progress takes the time left that it says; each other trial that has not ended takes the
// median time of the trials that ended ok (a running one less what it ran already); all
// spread over as many as run at once now. ok is false when none runs, or when a trial needs
// the median and none ended ok: there is nothing to go by. byProgress says whether a
// trial's progress was used.
func eta(tasks []results.Task, now time.Time) (left time.Duration, ok, byProgress bool) {
	var ended []time.Duration
	for _, t := range tasks {
		if d := t.Duration(); t.Status == results.StatusOK && d > 0 {
			ended = append(ended, d)
		}
	}
	slices.Sort(ended)
	var median time.Duration
	if len(ended) > 0 {
		median = ended[len(ended)/2]
	}
	running := 0
	for _, t := range tasks {
		switch t.Status {
		case results.StatusRunning:
			running++
			if p := t.Progress; p != nil && p.ETASeconds > 0 {
				left += time.Duration(p.ETASeconds * float64(time.Second))
				byProgress = true
				continue
			}
			if len(ended) == 0 {
				return 0, false, false
			}
			left += max(median-now.Sub(t.StartedAt), 0)
		case results.StatusPending, results.StatusPaused:
			if len(ended) == 0 {
				return 0, false, false
			}
			left += median
		}
	}
	if running == 0 {
		return 0, false, false
	}
	return left / time.Duration(running), true, byProgress
}
