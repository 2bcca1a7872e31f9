package order

import (
	"cmp"
	"crypto/sha256"
	"slices"
	"time"

	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
)

// Trials is the order a block's trials are offered to admission in. With order:
// longest-first (the default) the trials earlier runs of the file recorded as longest come
// first, ties to the larger GPU need: longest-processing-time first, which docs/gpu.md
// compares with other orders. Durations within sameLength of each other count as a tie, as
// recorded durations vary from run to run. Trials with no recorded duration go first, in
// file order, since any of them may be the longest; without history this is file order.
func Trials(b *plan.Task, trials []*plan.Task, hist *history.History) []*plan.Task {
	switch {
	case b.Order == plan.OrderShuffled:
		return shuffled(trials)
	case b.Order == plan.OrderFile || hist == nil:
		return trials
	}
	type keyed struct {
		t     *plan.Task
		d     time.Duration
		known bool
	}
	ks := make([]keyed, len(trials))
	for i, t := range trials {
		d, ok := Duration(hist, t)
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

// shuffled is order: shuffled: the trials sorted by a digest of their identities (which
// hold their block's name), an order that has nothing to do with the one they are written
// in (a matrix writes its worst learning rate first as readily as its best), and that
// every run of the file and every runall of a sweep draws the same. Not the block's
// identity: it holds its trials' in their written order.
func shuffled(trials []*plan.Task) []*plan.Task {
	digest := func(t *plan.Task) string {
		h := sha256.Sum256([]byte(t.Key))
		return string(h[:])
	}
	out := slices.Clone(trials)
	slices.SortStableFunc(out, func(x, y *plan.Task) int { return cmp.Compare(digest(x), digest(y)) })
	return out
}

// Duration is how long t took when it last succeeded: its command's time, or the
// sum of its steps' times.
func Duration(hist *history.History, t *plan.Task) (time.Duration, bool) {
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
