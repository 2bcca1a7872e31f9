package runner

import (
	"cmp"
	"slices"
	"time"

	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
)

// orderTrials is the order a block's trials are offered to admission in. With order:
// longest-first (the default) the trials earlier runs of the file recorded as longest come
// first, ties to the larger GPU need: longest-processing-time first, which docs/gpu.md
// compares with other orders. Durations within sameLength of each other count as a tie, as
// recorded durations vary from run to run. Trials with no recorded duration go first, in
// file order, since any of them may be the longest; without history this is file order.
func orderTrials(b *plan.Task, trials []*plan.Task, hist *history.History) []*plan.Task {
	if b.Order == plan.OrderFile || hist == nil {
		return trials
	}
	type keyed struct {
		t     *plan.Task
		d     time.Duration
		known bool
	}
	ks := make([]keyed, len(trials))
	for i, t := range trials {
		d, ok := recordedDuration(hist, t)
		ks[i] = keyed{t, d, ok}
	}
	slices.SortStableFunc(ks, func(x, y keyed) int {
		switch {
		case x.known != y.known:
			if !x.known {
				return -1
			}
			return 1
		case !x.known:
			return 0
		}
		return cmp.Compare(y.d, x.d)
	})
	for i := 0; i < len(ks); { // a run of near-equal durations: the larger need first
		j := i + 1
		for ks[i].known && j < len(ks) && ks[j].known && float64(ks[j].d) >= float64(ks[i].d)*(1-sameLength) {
			j++
		}
		slices.SortStableFunc(ks[i:j], func(x, y keyed) int { return cmp.Compare(gpuNeed(y.t), gpuNeed(x.t)) })
		i = j
	}
	out := make([]*plan.Task, len(ks))
	for i, k := range ks {
		out[i] = k.t
	}
	return out
}

// recordedDuration is how long t took when it last succeeded: its command's time, or the
// sum of its steps' times.
func recordedDuration(hist *history.History, t *plan.Task) (time.Duration, bool) {
	if len(t.Steps) == 0 {
		return hist.Duration(t.Key)
	}
	var sum time.Duration
	for _, s := range t.Steps {
		d, ok := hist.Duration(s.Key)
		if !ok {
			return 0, false
		}
		sum += d
	}
	return sum, true
}

// sameLength: recorded durations this close to the longest of a run of them are ties.
const sameLength = 0.10

func gpuNeed(t *plan.Task) uint64 {
	if t.GPU == nil {
		return 0
	}
	return t.GPU.Memory
}
