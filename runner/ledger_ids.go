package runner

import (
	"maps"
	"slices"

	"github.com/runall/runall/runner/results"
)

// maxID is the highest task ID the ledger has a result for, 0 when none: tasks made while
// the run goes on (a sampler's trials) are numbered after it.
func (l *ledger) maxID() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id := range maps.Keys(l.byID) {
		n = max(n, id)
	}
	return n
}

// madeWhileRunning is the results of tasks the plan does not list (a sampler's trials), by
// ID; l.mu is held.
func (l *ledger) madeWhileRunning(inPlan map[int]bool) []results.Task {
	var out []results.Task
	for _, id := range slices.Sorted(maps.Keys(l.byID)) {
		if !inPlan[id] {
			out = append(out, *l.byID[id])
		}
	}
	return out
}
