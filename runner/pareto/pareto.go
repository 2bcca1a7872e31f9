// Package pareto ranks points of several objectives by non-dominated sorting: the first
// front holds the points no other point dominates (as good in every objective and better in
// one), the second those only the first front dominates, and so on. It knows nothing of
// trials: a point is its objectives' values.
package pareto

import (
	"cmp"
	"slices"
)

// Ranks is each point's front, 1 for the first, where lower[k] says whether lower is better
// in objective k (each point has len(lower) values). Equal points share a front. It takes
// O(k·n²) time and O(n) memory: a point can be dominated only by one before it in
// lexicographic order, and its front is one past the furthest front among those.
func Ranks(points [][]float64, lower []bool) []int {
	loss := make([][]float64, len(points))
	for i, p := range points {
		loss[i] = make([]float64, len(lower))
		for k := range lower {
			loss[i][k] = p[k]
			if !lower[k] {
				loss[i][k] = -p[k]
			}
		}
	}
	order := make([]int, len(points))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return slices.Compare(loss[a], loss[b]) })
	ranks := make([]int, len(points))
	for n, i := range order {
		r := 1
		for _, j := range order[:n] {
			if ranks[j] >= r && dominates(loss[j], loss[i]) {
				r = ranks[j] + 1
			}
		}
		ranks[i] = r
	}
	return ranks
}

// dominates reports whether a is no worse than b in every objective and better in one
// (both to be minimised).
func dominates(a, b []float64) bool {
	better := false
	for k := range a {
		switch cmp.Compare(a[k], b[k]) {
		case 1:
			return false
		case -1:
			better = true
		}
	}
	return better
}
