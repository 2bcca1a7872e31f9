package sched

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBound walks random lines where random trials fit, and checks the line's promises: no
// trial is passed over more than the bound, one passed over that often is passed by nobody
// (it holds the line), and a walk stops at Full.
func TestBound(t *testing.T) {
	for seed := range 300 {
		rnd := rand.New(rand.NewPCG(uint64(seed), 1))
		bound := rnd.IntN(5)
		n := 5 + rnd.IntN(20)
		q := NewLine(seqN(n), bound)
		for round := 0; q.Len() > 0; round++ {
			if round > 10*n {
				t.Fatalf("seed %d: the line never drained", seed)
			}
			before := map[int]int{}
			var ahead []int
			for _, w := range q.waiting {
				before[w.v] = w.passedBy
				ahead = append(ahead, w.v)
			}
			started, full := map[int]bool{}, rnd.IntN(8) == 0
			q.Admit(func(v int) Tried {
				if full && len(started) == 2 {
					return Full
				}
				if rnd.IntN(3) == 0 {
					started[v] = true
					return Started
				}
				return Waits
			})
			if full && len(started) > 2 {
				t.Fatalf("seed %d: %d started after Full", seed, len(started))
			}
			check(t, seed, ahead, started, before, bound)
		}
	}
}

func check(t *testing.T, seed int, ahead []int, started map[int]bool, before map[int]int, bound int) {
	t.Helper()
	for i, v := range ahead {
		if started[v] {
			continue
		}
		passed := before[v]
		for _, w := range ahead[i+1:] {
			if started[w] {
				passed++
			}
		}
		if passed > bound {
			t.Fatalf("seed %d: trial %d passed over %d times, bound %d", seed, v, passed, bound)
		}
		if before[v] >= bound && passed > before[v] {
			t.Fatalf("seed %d: trial %d held the line (passed %d times) and was passed", seed, v, before[v])
		}
	}
}

func seqN(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestFrontDroppedDrain(t *testing.T) {
	q := NewLine([]int{1, 2, 3}, 4)
	q.Front(9)
	var tried []int
	q.Admit(func(v int) Tried {
		tried = append(tried, v)
		if v == 2 {
			return Dropped
		}
		return Waits
	})
	if !slices.Equal(tried, []int{9, 1, 2, 3}) || q.Len() != 3 || q.PassedBy(9) != 0 || q.PassedBy(2) != -1 {
		t.Errorf("tried %v, %d left", tried, q.Len())
	}
	if got := q.Drain(); !slices.Equal(got, []int{9, 1, 3}) || q.Len() != 0 {
		t.Errorf("drained %v, %d left", got, q.Len())
	}
}
