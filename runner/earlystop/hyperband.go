package earlystop

import (
	"cmp"
	"crypto/sha256"
	"math"
	"slices"
)

// Hyperband's brackets (Li et al., 2018): with R = max/grace and s_max = ⌊log_reduction R⌋,
// bracket s (s_max down to 0) starts n_s = ⌈(s_max+1)/(s+1)·reduction^s⌉ trials at step
// max·reduction^-s and halves them as sha does. The block's trials are its trials: they are
// split among the brackets in proportion to n_s, in an order drawn from their keys and the
// block's, so that every runall puts each trial in the same bracket whatever order they were
// written in.

// BracketShape is one hyperband bracket: the step of its first round and its share of the
// block's trials.
type BracketShape struct {
	First  int     // its first round's step
	Weight float64 // n_s: the trials the paper's bracket starts
}

// Brackets are hyperband's brackets, most aggressive first; sha's one.
func (c Config) Brackets() []BracketShape {
	c = c.withDefaults()
	if c.Method != Hyperband || c.Max <= c.Grace {
		return []BracketShape{{First: c.Grace, Weight: 1}}
	}
	r := float64(c.Reduction)
	smax := int(math.Floor(math.Log(float64(c.Max)/float64(c.Grace))/math.Log(r) + 1e-9))
	var out []BracketShape
	for s := smax; s >= 0; s-- {
		first := int(math.Round(float64(c.Max) / math.Pow(r, float64(s))))
		n := math.Ceil(float64(smax+1) / float64(s+1) * math.Pow(r, float64(s)))
		out = append(out, BracketShape{First: max(first, c.Grace), Weight: n})
	}
	return out
}

// Split is how many of n trials each bracket gets: in proportion to their weights, largest
// remainders first.
func Split(shapes []BracketShape, n int) []int {
	total := 0.0
	for _, s := range shapes {
		total += s.Weight
	}
	counts := make([]int, len(shapes))
	rest := make([]float64, len(shapes))
	given := 0
	for i, s := range shapes {
		share := float64(n) * s.Weight / total
		counts[i] = int(math.Floor(share))
		rest[i] = share - float64(counts[i])
		given += counts[i]
	}
	order := make([]int, len(shapes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rest[b], rest[a]) })
	for _, i := range order[:n-given] {
		counts[i]++
	}
	return counts
}

// hyperbandBrackets deals the trials (sorted keys) to the brackets, in the order of a digest
// of the block's key and each trial's.
func (c Config) hyperbandBrackets(block string, keys []string) []bracket {
	shapes := c.Brackets()
	dealt := slices.Clone(keys)
	digest := func(k string) string {
		h := sha256.Sum256([]byte(block + "\x00" + k))
		return string(h[:])
	}
	slices.SortFunc(dealt, func(a, b string) int { return cmp.Compare(digest(a), digest(b)) })
	var out []bracket
	at := 0
	for i, n := range Split(shapes, len(keys)) {
		trials := slices.Clone(dealt[at : at+n])
		slices.Sort(trials)
		at += n
		if len(trials) > 0 {
			out = append(out, bracket{trials: trials, steps: c.roundSteps(shapes[i].First)})
		}
	}
	return out
}
