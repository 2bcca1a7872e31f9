package forecast

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Reference is another trial of the sweep that got further: its values at the steps a
// trial's prefix is matched on (Prefix, oldest first) and its value at max (End), higher
// being the better.
type Reference struct {
	Name   string
	Prefix []float64
	End    float64
}

// The reference model's settings.
const (
	// prefixLen is how many of a trial's latest values it is matched on: two give its
	// level and its slope, three its bend.
	prefixLen = 3
	// maxReferences bounds the references a forecast reads: the nearest, so that a sweep of
	// thousands costs what one of 64 does.
	maxReferences = 64
	// lengthShare is the kernel's length-scale as a share of the span of the values seen:
	// prefixes that far apart tell each other little. Near-duplicates (the same
	// configuration but for a setting that barely matters) lie within it; a curve of another
	// speed does not.
	lengthShare = 1.0 / 40
	// priorShare is the prior's standard deviation of a curve's remaining gain, as a share of
	// that span: a curve that matches no reference may gain (or lose) half of what the
	// sweep's values span with a chance of about one in six. Narrower is cheaper and wrong
	// on crossing curves: at 0.3 a slow starter at step 2 (0.37) among fast references (0.76
	// there, 0.86 at the end) stops (TestReferenceCrossingSlowStarters), though on the
	// curves benchmark's real set 0.3 would spend 221 epochs where 0.5 spends 248 (a replay
	// of its curves).
	priorShare = 0.5
	// informedShare is how far below the prior's spread a forecast's must lie for it to
	// count as informed by the references (Informed).
	informedShare = 0.5
)

// FromReferences forecasts the value at max of a curve whose latest values are prefix
// (oldest first, higher better, at the same steps as each reference's Prefix) from the
// references' remaining gains, as Chandrashekaran and Lane (2017) extrapolate a curve from
// the finished curves of earlier builds and Baker et al. (2017) regress a trial's end on its
// prefix: a Gaussian process over prefixes (a squared-exponential kernel of length-scale
// lengthShare of span, the span of the values seen) gives the trial's gain from its last
// value to max, from the references' gains. Its prior is their mean gain with a spread of
// priorShare of span, so that a curve unlike every reference (a slow starter among fast
// ones) is forecast with a wide band and not judged by curves of another shape. Its band is
// calibrated by how the references' own forecasts miss: each reference forecast from the
// others (leave-one-out), and the band widened by the mean square of those misses in units
// of their own band when they miss by more than it says. ok is false without references.
// The same references in any order give the same forecast.
func FromReferences(prefix []float64, refs []Reference, span, resolution float64) (p Prediction, ok bool) {
	refs = nearest(prefix, refs)
	if len(refs) == 0 || len(prefix) == 0 || span <= 0 {
		return Prediction{}, false
	}
	n := len(refs)
	ell := lengthShare * span
	s0 := priorShare * span
	nugget := max(resolution*resolution, noiseFloor*span*noiseFloor*span)
	gains := make([]float64, n)
	m0 := 0.0
	for i, r := range refs {
		gains[i] = r.End - r.Prefix[len(r.Prefix)-1]
		m0 += gains[i] / float64(n)
	}
	kern := func(a, b []float64) float64 { return s0 * s0 * math.Exp(-dist2(a, b)/(2*ell*ell)) }
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := kern(refs[i].Prefix, refs[j].Prefix)
			if i == j {
				v += nugget
			}
			a.SetSym(i, j, v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		return Prediction{}, false
	}
	var inv mat.SymDense
	if err := chol.InverseTo(&inv); err != nil {
		return Prediction{}, false
	}
	resid := make([]float64, n)
	for i := range n {
		resid[i] = gains[i] - m0
	}
	var alpha mat.VecDense
	alpha.MulVec(&inv, mat.NewVecDense(n, resid))
	scale := 0.0 // the leave-one-out misses, squared, in units of their own variance
	for i := range n {
		scale += alpha.AtVec(i) * alpha.AtVec(i) / inv.At(i, i) / float64(n)
	}
	ks := mat.NewVecDense(n, nil)
	for i, r := range refs {
		ks.SetVec(i, kern(prefix, r.Prefix))
	}
	var w mat.VecDense
	w.MulVec(&inv, ks)
	mean := m0 + mat.Dot(ks, &alpha)
	variance := max(s0*s0-mat.Dot(ks, &w), 0) + nugget
	variance *= max(1, scale)
	return Prediction{parts: []part{{w: 1, mu: prefix[len(prefix)-1] + mean, sd: math.Sqrt(variance), name: "references"}}}, true
}

// Informed reports whether a forecast from the references is narrower than their prior
// by informedShare: some reference's prefix lies near the trial's.
func Informed(p Prediction, span float64) bool {
	return len(p.parts) == 1 && p.parts[0].name == "references" && p.parts[0].sd < informedShare*priorShare*span
}

// nearest are the maxReferences references nearest prefix, with a prefix as long as its,
// nearest first, ties by name.
func nearest(prefix []float64, refs []Reference) []Reference {
	var out []Reference
	for _, r := range refs {
		if len(r.Prefix) == len(prefix) && usable(r.End) && !slices.ContainsFunc(r.Prefix, func(v float64) bool { return !usable(v) }) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Reference) int {
		return cmp.Or(cmp.Compare(dist2(prefix, a.Prefix), dist2(prefix, b.Prefix)), cmp.Compare(a.Name, b.Name))
	})
	return out[:min(len(out), maxReferences)]
}

// dist2 is the mean squared difference of two prefixes.
func dist2(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s / float64(len(a))
}

func usable(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Combine is the forecast of both models, a mixture weighed by precision: the references'
// where their band is the narrower, the families' where theirs is (a curve of a shape no
// reference has).
func Combine(fams, refs Prediction) Prediction {
	vf, vr := fams.variance(), refs.variance()
	if vf <= 0 || vr <= 0 {
		return fams
	}
	wr := (1 / vr) / (1/vr + 1/vf)
	parts := make([]part, 0, len(fams.parts)+len(refs.parts))
	for _, q := range fams.parts {
		q.w *= 1 - wr
		parts = append(parts, q)
	}
	for _, q := range refs.parts {
		q.w *= wr
		parts = append(parts, q)
	}
	return Prediction{parts: parts}
}

// variance is the mixture's.
func (p Prediction) variance() float64 {
	m, s := 0.0, 0.0
	for _, q := range p.parts {
		m += q.w * q.mu
	}
	for _, q := range p.parts {
		s += q.w * (q.sd*q.sd + (q.mu-m)*(q.mu-m))
	}
	return s
}
