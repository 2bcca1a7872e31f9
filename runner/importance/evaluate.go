package importance

import (
	"math"
	"slices"
	"strconv"
)

// topQuantile is Optuna's _QuantileFilter: the indices of the trials whose value is at least
// as good as the ceil(q*n)-th best, ties included.
func topQuantile(trials []Trial, q float64, lowerBetter bool) map[int]bool {
	loss := make([]float64, len(trials))
	for i, t := range trials {
		loss[i] = t.Value
		if !lowerBetter {
			loss[i] = -t.Value
		}
	}
	sorted := slices.Clone(loss)
	slices.Sort(sorted)
	cutoff := sorted[int(math.Ceil(q*float64(len(loss))))-1]
	out := map[int]bool{}
	for i, l := range loss {
		if l <= cutoff {
			out[i] = true
		}
	}
	return out
}

// paramImportance is PED-ANOVA's importance of one parameter before normalising (the loop of
// PedAnovaImportanceEvaluator.evaluate, with region_quantile 1): the trials that have it are
// one regime and those that lack it another, which no estimator describes; each counts only
// with minInRegime trials.
func paramImportance(name string, trials []Trial, top map[int]bool, log bool) float64 {
	var region, target []string
	for i, t := range trials {
		v, ok := t.Params[name]
		if !ok {
			continue
		}
		region = append(region, v)
		if top[i] {
			target = append(target, v)
		}
	}
	if len(region) < minInRegime || len(target) == 0 {
		return 0
	}
	sp := spaceOf(region, log)
	if sp.single() {
		return 0
	}
	alpha := float64(len(target)) / float64(len(top))
	beta := float64(len(region)) / float64(len(trials))
	quantile := float64(len(top)) / float64(len(trials))
	return alpha * alpha / beta * pearsonDivergence(sp, target, region) * quantile * quantile
}

// pearsonDivergence is _compute_pearson_divergence with evaluate_on_local: how far the top
// trials' estimator lies from the region's, over the grid.
func pearsonDivergence(sp space, target, region []string) float64 {
	top := sp.estimate(target, Steps, PriorWeight).pdf()
	local := sp.estimate(region, Steps, PriorWeight).pdf()
	d := 0.0
	for i := range top {
		pt, pl := top[i]+1e-12, local[i]+1e-12
		r := pt/pl - 1
		d += pl * r * r
	}
	return d
}

// spearman is the rank correlation of a numerical parameter's values with the trials'
// values, over the trials that have it; 0 for a choice or where either does not vary.
func spearman(name string, trials []Trial) float64 {
	var xs, ys []float64
	for _, t := range trials {
		v, ok := t.Params[name]
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0
		}
		xs, ys = append(xs, f), append(ys, t.Value)
	}
	c := pearson(ranks(xs), ranks(ys))
	if math.IsNaN(c) {
		return 0
	}
	return c
}

// ranks are the 1-based ranks of xs, ties given the mean of their ranks.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(xs[a], xs[b]) })
	out := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			out[idx[k]] = r
		}
		i = j + 1
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pearson is the correlation of xs and ys; NaN when either does not vary.
func pearson(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	return sxy / math.Sqrt(sxx*syy)
}
