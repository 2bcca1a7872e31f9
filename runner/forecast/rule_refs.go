package forecast

import (
	"fmt"
	"math"

	"github.com/runall/runall/runner/earlystop"
)

// kept reports whether the rule shares a trial's value at step, for the others to match
// their prefixes on: every step while it decides at every step, then the ones it decides
// at and the prefixLen before each.
func (r *Rule) kept(step int) bool {
	for s := step; s < step+prefixLen; s++ {
		if s <= r.c.Grace || earlystop.DecidesAt(r.c.Grace, s) {
			return true
		}
	}
	return false
}

// share records the trial's value at step in the store, where the other trials (of every
// runall of the sweep) read it as part of a reference's prefix.
func (r *Rule) share(trial string, step int, v float64) error {
	if step >= r.c.Max || !usable(v) || !r.kept(step) {
		return nil
	}
	if err := r.st.Put(step, trial, v); err != nil {
		return fmt.Errorf("early-stop: record the value at step %d: %w", step, err)
	}
	return nil
}

// forecast is what the rule forecasts a trial's curve (pts, higher better) to reach at
// max: the references' forecast (FromReferences: the trials that reached max, matched on
// the latest shared values of its prefix), the families' (Fit) once it has enough points,
// or both combined where the references are informed (their prior alone, mixed into a fit,
// would only widen it: a trial forecast at 0.78 against a best of 0.83 would keep a chance
// of a few percent from it whatever its curve). refs is how many references it read; informed is whether the
// references narrowed it or the families fitted (a forecast that is more than the
// references' prior); ok is false when neither model can forecast yet.
func (r *Rule) forecast(trial string, pts []Point) (pred Prediction, refs int, informed, ok bool, err error) {
	fams, fitted := Fit(pts, r.c.Max, r.c.Families)
	prefix, steps := r.prefixOf(pts)
	if len(prefix) == 0 {
		return fams, 0, fitted, fitted, nil
	}
	rs, err := r.references(trial, steps)
	if err != nil {
		return fams, 0, fitted, fitted, err
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if usable(p.Value) {
			lo, hi = min(lo, p.Value), max(hi, p.Value)
		}
	}
	for _, ref := range rs {
		for _, v := range append(ref.Prefix, ref.End) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	span := hi - lo
	byRefs, ok := FromReferences(prefix, rs, span, resolution(valuesOf(pts)))
	switch {
	case !ok:
		return fams, 0, fitted, fitted, nil
	case !fitted:
		return byRefs, len(rs), Informed(byRefs, span), true, nil
	case !Informed(byRefs, span):
		return fams, len(rs), true, true, nil // their prior adds nothing to a fit
	}
	return Combine(fams, byRefs), len(rs), true, true, nil
}

// prefixOf is the trial's latest prefixLen values at steps the rule shares, oldest first,
// with their steps; none when its latest point is not at such a step.
func (r *Rule) prefixOf(pts []Point) (prefix []float64, steps []int) {
	for i := len(pts) - 1; i >= 0 && len(steps) < prefixLen; i-- {
		p := pts[i]
		if !r.kept(p.Step) || p.Step >= r.c.Max {
			continue
		}
		if !usable(p.Value) {
			return nil, nil
		}
		prefix = append([]float64{p.Value}, prefix...)
		steps = append([]int{p.Step}, steps...)
	}
	if len(steps) == 0 || steps[len(steps)-1] != pts[len(pts)-1].Step {
		return nil, nil
	}
	return prefix, steps
}

// references are the other trials that reached max with values at each of steps, in the
// fit's units (higher better).
func (r *Rule) references(trial string, steps []int) ([]Reference, error) {
	ends, err := r.st.Rung(r.c.Max)
	if err != nil {
		return nil, fmt.Errorf("early-stop: read the values at step %d: %w", r.c.Max, err)
	}
	delete(ends, trial)
	at := make([]map[string]float64, len(steps))
	for i, s := range steps {
		if at[i], err = r.st.Rung(s); err != nil {
			return nil, fmt.Errorf("early-stop: read the values at step %d: %w", s, err)
		}
	}
	sign := r.sign()
	var out []Reference
	for name, end := range ends {
		if end == r.worst() || !usable(end) {
			continue
		}
		ref := Reference{Name: name, End: sign * end}
		for i := range steps {
			v, ok := at[i][name]
			if !ok {
				break
			}
			ref.Prefix = append(ref.Prefix, sign*v)
		}
		if len(ref.Prefix) == len(steps) {
			out = append(out, ref)
		}
	}
	return out, nil
}

// valuesOf are the points' values.
func valuesOf(pts []Point) []float64 {
	out := make([]float64, 0, len(pts))
	for _, p := range pts {
		if usable(p.Value) {
			out = append(out, p.Value)
		}
	}
	return out
}
