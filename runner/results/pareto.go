package results

// Pareto fronts by non-dominated sorting, for Assess alone (its only user, so no package of
// its own): the first front holds the points no other point dominates (as good in every
// objective and better in one), the second those only the first front dominates, and so on.
// It knows nothing of trials: a point is its objectives' values.

import (
	"cmp"
	"slices"
	"sort"
)

// paretoRanks is each point's front, 1 for the first, where lower[k] says whether lower is better
// in objective k (each point has len(lower) values). Equal points share a front. A point can
// be dominated only by one before it in lexicographic order, and its front is one past the
// furthest front among those, found by binary search (if a front dominates a point, so does
// every front before it). O(n log n) for two objectives; at most O(k·n²) for more.
func paretoRanks(points [][]float64, lower []bool) []int {
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
	if len(lower) == 2 {
		return ranks2(loss, order)
	}
	// As ranks2, with each front's members scanned: a front dominates a point when one of its
	// members does.
	ranks := make([]int, len(points))
	var fronts [][]int
	for _, i := range order {
		k := sort.Search(len(fronts), func(k int) bool {
			return !slices.ContainsFunc(fronts[k], func(j int) bool { return dominates(loss[j], loss[i]) })
		})
		if k == len(fronts) {
			fronts = append(fronts, nil)
		}
		fronts[k] = append(fronts[k], i)
		ranks[i] = k + 1
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

// ranks2 is Ranks for two objectives, the points visited in lexicographic order: a front
// dominates a point when its least second value is below the point's (or equal, reached at
// a smaller first value); if front k dominates it so does every front before k (each member
// of k is dominated by one of k-1), so the point's front is found by binary search.
func ranks2(loss [][]float64, order []int) []int {
	ranks := make([]int, len(loss))
	var least, firstAt []float64 // each front's least second value, and the first value it had
	for _, i := range order {
		p := loss[i]
		k := sort.Search(len(least), func(k int) bool {
			return !(least[k] < p[1] || (least[k] == p[1] && firstAt[k] < p[0]))
		})
		if k == len(least) {
			least, firstAt = append(least, p[1]), append(firstAt, p[0])
		} else if p[1] < least[k] {
			least[k], firstAt[k] = p[1], p[0]
		}
		ranks[i] = k + 1
	}
	return ranks
}
