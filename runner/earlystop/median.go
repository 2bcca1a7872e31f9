package earlystop

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sync"
)

// everyStep is how many steps from grace on median decides at each one; after them it decides
// at every 2nd step for the next everyStep/2 decisions, then every 4th, and so on (64
// decisions per doubling of the steps), so that a trial of a million steps records about
// 1,000 running averages, not a million.
const everyStep = 128

// decides reports whether median decides (and records a running average) at step: every
// step of the first everyStep from grace on, then every 2^k-th step once k doublings past them.
// The steps depend on grace alone, so that every trial records at the same ones.
func decides(grace, step int) bool {
	k := step - grace
	if k < 0 {
		return false
	}
	if k < everyStep {
		return true
	}
	stride := 1 << bits.Len(uint(k/everyStep))
	return k%stride == 0
}

// DecidesAt reports whether a rule that decides step by step (median, forecast) decides at
// step: every step of the first 128 from grace on, then ever fewer (see decides).
func DecidesAt(grace, step int) bool { return decides(grace, step) }

// percentile is the q-quantile of vals (0 ≤ q ≤ 1), interpolated linearly between the two
// nearest ranks (numpy's default). The weighted sum stays finite between the worst values.
func percentile(vals []float64, q float64) float64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	hi := min(lo+1, len(s)-1)
	f := pos - float64(lo)
	if f == 0 || s[lo] == s[hi] {
		return s[lo]
	}
	return s[lo]*(1-f) + s[hi]*f
}

// curve is what median keeps of one trial's values: its last step and value (which a
// redrawn step replaces) and the totals of the steps before it. Constant in size, whatever
// the trial's length.
type curve struct {
	step int
	last float64 // NaN: the last step had no usable value
	// Of the usable values before the last step: their sum, their count and the best.
	sum  float64
	n    int
	best float64
}

// add takes the value at step: a new step, the last one drawn again, or a retried
// command's new attempt, whose steps count from 1 again.
func (c *curve) add(mode string, step int, v float64) {
	switch {
	case c.step == step:
		c.last = v // the same step drawn again
		return
	case c.step > step:
		*c = curve{} // a retried command's new attempt: the old one's values are not its own
	case c.step > 0 && usable(c.last):
		c.sum += c.last
		if c.n == 0 || better(mode, c.last, c.best) {
			c.best = c.last
		}
		c.n++
	}
	c.step, c.last = step, v
}

// average is the running average of its usable values; the worst value when it has none.
func (c *curve) average(mode string) float64 {
	sum, n := c.sum, c.n
	if usable(c.last) {
		sum, n = sum+c.last, n+1
	}
	if n == 0 {
		return worst(mode)
	}
	return sum / float64(n)
}

// decisive is the value it is judged by: its best so far, or the worst value when its step
// had no usable value (a diverged trial is not saved by its past).
func (c *curve) decisive(mode string) float64 {
	if !usable(c.last) {
		return worst(mode)
	}
	if c.n > 0 && better(mode, c.best, c.last) {
		return c.best
	}
	return c.last
}

type median struct {
	c  Config
	st Store // every trial's running average at the steps it decides at

	mu     sync.Mutex
	curves map[string]*curve // what this runall's trials reported
}

func (m *median) Observe(trial string, step int, v float64) (Decision, error) {
	m.mu.Lock()
	cv := m.curves[trial]
	if cv == nil {
		cv = &curve{}
		m.curves[trial] = cv
	}
	cv.add(m.c.Mode, step, v)
	value, avg := cv.decisive(m.c.Mode), cv.average(m.c.Mode)
	m.mu.Unlock()
	if !decides(m.c.Grace, step) {
		return Decision{}, nil // no other trial compares here: nothing to record
	}

	others, err := m.st.Rung(step)
	if err != nil {
		return Decision{}, fmt.Errorf("early-stop: read the running averages at step %d: %w", step, err)
	}
	delete(others, trial) // its own, from an earlier attempt or drawing
	if err := m.st.Put(step, trial, avg); err != nil {
		return Decision{}, fmt.Errorf("early-stop: record the running average at step %d: %w", step, err)
	}
	if len(others) < max(m.c.MinTrials, 1) {
		return Decision{}, nil
	}
	avgs := slices.Collect(maps.Values(others))
	med := percentile(avgs, 0.5)
	if !better(m.c.Mode, med, value) {
		return Decision{}, nil
	}
	what := "best " + m.c.Metric + " " + shown(value) + " by step"
	if !usable(v) {
		what = m.c.Metric + " " + shown(v) + " at step"
	}
	return Decision{Stop: true, Reason: fmt.Sprintf("median: %s %d is worse than the median %s of %d other trials' running averages there",
		what, step, shown(med), len(avgs))}, nil
}
