package importance

import (
	"math"
	"slices"
	"strconv"
)

// space is what Optuna calls a parameter's distribution, as runall sees it: the values its
// trials took (a results file keeps no declared range). A parameter is a number when every
// value reads as one, over [low, high] of the values (log: on a log scale, sample:
// loguniform); else a choice among the values taken, in sorted order.
type space struct {
	choices   []string // a categorical parameter's choices; nil for a number
	low, high float64
	log, ints bool // log scale; every value an integer (Optuna's IntDistribution, step 1)
}

// spaceOf is the space of the values vals; log asks for a log scale, which needs low > 0.
func spaceOf(vals []string, log bool) space {
	nums := make([]float64, 0, len(vals))
	ints := true
	for _, v := range vals {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			c := slices.Clone(vals)
			slices.Sort(c)
			return space{choices: slices.Compact(c)}
		}
		nums = append(nums, f)
		ints = ints && f == math.Trunc(f) && math.Abs(f) < 1<<53
	}
	s := space{low: slices.Min(nums), high: slices.Max(nums), ints: ints}
	s.log = log && s.low > 0
	return s
}

// single reports whether the space holds one value only: a parameter that cannot matter.
func (s space) single() bool {
	if s.choices != nil {
		return len(s.choices) == 1
	}
	return s.low == s.high
}

// count is how many of vals fall on each grid point (_count_numerical_param_in_grid and
// _count_categorical_param_in_grid).
func (s space) count(vals []string, steps int) []float64 {
	if s.choices != nil {
		out := make([]float64, len(s.choices))
		for _, v := range vals {
			i, _ := slices.BinarySearch(s.choices, v)
			out[i]++
		}
		return out
	}
	n := steps
	switch {
	case s.ints && s.log:
		n = min(int(math.Ceil(math.Log(s.high-s.low+1)/math.Log(2)))+1, n)
	case s.ints:
		n = min(int(math.Round(s.high-s.low))+1, n)
	}
	low, high := s.low, s.high
	if s.log {
		low, high = math.Log(low), math.Log(high)
	}
	step := (high - low) / float64(n-1)
	out := make([]float64, n)
	for _, v := range vals {
		f, _ := strconv.ParseFloat(v, 64)
		if s.log {
			f = math.Log(f)
		}
		// Midpoint ties go to the lower grid point, as in Optuna.
		i := int(math.Ceil((f-low)/step - 0.5))
		out[max(0, min(n-1, i))]++
	}
	return out
}

// estimate is build_parzen_estimator_on_grid: the estimator of vals over the space's grid.
func (s space) estimate(vals []string, steps int, prior float64) *estimator {
	counts := s.count(vals, steps)
	var obs, w []float64
	for i, c := range counts {
		if c > 0 {
			obs, w = append(obs, float64(i)), append(w, c)
		}
	}
	if s.choices != nil {
		return newCategorical(obs, w, len(counts), prior)
	}
	return newNumerical(obs, w, len(counts), prior)
}
