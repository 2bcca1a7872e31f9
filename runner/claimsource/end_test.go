package claimsource

import (
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestEndedForGood: a trial that ended by runall's own rule (pruned, diverged) is the sweep's
// end even when a signal then stopped runall; one stopped or failed midway is not final.
func TestEndedForGood(t *testing.T) {
	for _, tc := range []struct {
		statuses      []results.Status
		failed, final bool
	}{
		{[]results.Status{results.StatusOK}, false, true},
		{[]results.Status{results.StatusOK, results.StatusIgnored}, false, true},
		{[]results.Status{results.StatusPruned}, false, true},
		{[]results.Status{results.StatusDiverged}, false, true},
		{[]results.Status{results.StatusOK, results.StatusStopped}, false, false},
		{[]results.Status{results.StatusFailed}, true, false},
		{[]results.Status{results.StatusPaused}, false, false},
	} {
		var ts []results.Task
		for _, s := range tc.statuses {
			ts = append(ts, results.Task{Status: s})
		}
		if failed, final := ended(ts); failed != tc.failed || final != tc.final {
			t.Errorf("%v: failed %v, final %v; want %v, %v", tc.statuses, failed, final, tc.failed, tc.final)
		}
	}
}
