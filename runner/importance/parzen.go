package importance

import (
	"math"
	"sort"
)

// The Parzen estimators PED-ANOVA compares, ported from Optuna's
// optuna/importance/_ped_anova/scott_parzen_estimator.py: a parameter's values are counted
// on a grid (Steps points for a number, one per choice), and the counts become a mixture of
// one kernel per occupied grid point and one prior kernel over the whole grid.

// estimator is a 1-D Parzen estimator on the grid points 0..size-1.
type estimator struct {
	size    int
	weights []float64 // each kernel's weight, the prior's last; they sum to 1
	// A numerical parameter's kernels: discrete normals truncated to [0, size-1].
	mus, sigmas []float64
	// A categorical parameter's kernels: each a distribution over the choices.
	cat [][]float64
}

// newNumerical is ScottParzenEstimator over IntDistribution(0, size-1): obs are the grid
// points that hold values (ascending), counts how many each holds.
func newNumerical(obs, counts []float64, size int, prior float64) *estimator {
	e := &estimator{size: size, weights: mixtureWeights(counts, prior)}
	low, high := 0.0, float64(size-1)
	if len(obs) == 0 {
		e.mus, e.sigmas = []float64{(low + high) / 2}, []float64{high - low + 1}
		return e
	}
	cum := make([]float64, len(counts))
	sum := 0.0
	for i, c := range counts {
		sum += c
		cum[i] = sum
	}
	mean := 0.0
	for i, o := range obs {
		mean += o * counts[i]
	}
	mean /= sum
	ss := 0.0
	for i, o := range obs {
		ss += (o - mean) * (o - mean) * counts[i]
	}
	sigma := math.Sqrt(ss / math.Max(1, sum-1))
	// np.searchsorted(cum, sum // 4, side="left") and (cum, sum * 3 // 4, side="right").
	q1 := sort.SearchFloat64s(cum, math.Floor(sum/4))
	q3 := sort.Search(len(cum), func(i int) bool { return cum[i] > math.Floor(sum*3/4) })
	iqr := obs[min(len(obs)-1, q3)] - obs[q1]
	sigma = 1.059 * math.Min(iqr/1.34, sigma) * math.Pow(sum, -0.2)
	const sigmaMin = 0.5 / 1.64 // 1.64 sigma (90%) fits in a grid step
	for _, o := range obs {
		e.mus = append(e.mus, o)
		e.sigmas = append(e.sigmas, math.Max(sigma, sigmaMin))
	}
	e.mus = append(e.mus, (low+high)/2)
	e.sigmas = append(e.sigmas, high-low+1)
	return e
}

// newCategorical is ScottParzenEstimator over a choice of size: obs are the choices that
// were taken, counts how often.
func newCategorical(obs, counts []float64, size int, prior float64) *estimator {
	e := &estimator{size: size, weights: mixtureWeights(counts, prior)}
	if len(obs) == 0 {
		row := make([]float64, size)
		for i := range row {
			row[i] = 1 / float64(size)
		}
		e.cat = [][]float64{row}
		return e
	}
	kernels := len(obs) + 1
	for k := range kernels {
		row := make([]float64, size)
		for i := range row {
			row[i] = prior / float64(kernels)
		}
		if k < len(obs) {
			row[int(obs[k])]++
		}
		s := 0.0
		for _, x := range row {
			s += x
		}
		if s != 0 {
			for i := range row {
				row[i] /= s
			}
		}
		e.cat = append(e.cat, row)
	}
	return e
}

// mixtureWeights are the counts and the prior's weight, normalised; [1] with no counts.
func mixtureWeights(counts []float64, prior float64) []float64 {
	if len(counts) == 0 {
		return []float64{1}
	}
	w := append(append([]float64(nil), counts...), prior)
	s := 0.0
	for _, x := range w {
		s += x
	}
	for i := range w {
		w[i] /= s
	}
	return w
}

// pdf is the estimator's probability at each grid point.
func (e *estimator) pdf() []float64 {
	out := make([]float64, e.size)
	for x := range out {
		p := 0.0
		for k, w := range e.weights {
			if w == 0 {
				continue
			}
			if e.cat != nil {
				p += w * e.cat[k][x]
				continue
			}
			mu, s := e.mus[k], e.sigmas[k]
			lo, hi := -0.5, float64(e.size-1)+0.5
			p += w * gaussMass((float64(x)-0.5-mu)/s, (float64(x)+0.5-mu)/s) / gaussMass((lo-mu)/s, (hi-mu)/s)
		}
		out[x] = p
	}
	return out
}

// gaussMass is the standard normal's mass between a and b (a <= b), computed on the side
// of the mean where it does not cancel away.
func gaussMass(a, b float64) float64 {
	switch {
	case a > 0:
		return 0.5 * (math.Erfc(a/math.Sqrt2) - math.Erfc(b/math.Sqrt2))
	case b < 0:
		return 0.5 * (math.Erfc(-b/math.Sqrt2) - math.Erfc(-a/math.Sqrt2))
	}
	return 1 - 0.5*math.Erfc(-a/math.Sqrt2) - 0.5*math.Erfc(b/math.Sqrt2)
}
