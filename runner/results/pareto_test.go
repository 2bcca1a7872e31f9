package results

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The cases of Optuna's test_fast_non_domination_rank (tests/study_tests/
// test_multi_objective.py, Optuna 5.0.0.dev), all minimised; Optuna counts fronts from 0.
func TestParetoRanksOptunaCases(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		points [][]float64
		want   []int
	}{
		{[][]float64{{10}, {20}, {20}, {30}}, []int{0, 1, 1, 2}},
		{[][]float64{{10, 30}, {10, 10}, {20, 20}, {30, 10}, {15, 15}}, []int{1, 0, 2, 1, 1}},
		{[][]float64{{5, 5, 4}, {5, 5, 5}, {9, 9, 0}, {5, 7, 5}, {0, 0, 9}, {0, 9, 9}}, []int{0, 1, 0, 2, 0, 1}},
		{[][]float64{{-5, -5, -4}, {-5, -5, 5}, {-9, -9, 0}, {5, 7, 5}, {0, 0, -9}, {0, -9, 9}}, []int{0, 1, 0, 2, 0, 1}},
		{[][]float64{{1, 1}, {1, inf}, {inf, 1}, {inf, inf}}, []int{0, 1, 1, 2}},
		{[][]float64{{1, 1}, {1, -inf}, {-inf, 1}, {-inf, -inf}}, []int{2, 1, 1, 0}},
		{[][]float64{{1, 1}, {1, 1}, {1, 2}, {2, 1}, {0, 1.5}, {1.5, 0}, {0, 1.5}}, []int{0, 0, 1, 1, 0, 0, 0}},
		{[][]float64{{1, 1}, {1, 1}, {1, 2}, {2, 1}, {1, 1}, {0, 1.5}, {0, 1.5}}, []int{0, 0, 1, 1, 0, 0, 0}},
		{[][]float64{{1, 1, 1}, {1, 1, 1}, {1, 1, 2}, {1, 2, 1}, {2, 1, 1}, {0, 1.5, 1.5}, {0, 1.5, 1.5}}, []int{0, 0, 1, 1, 1, 0, 0}},
	} {
		lower := make([]bool, len(c.points[0]))
		for k := range lower {
			lower[k] = true
		}
		got := paretoRanks(c.points, lower)
		for i := range got {
			got[i]--
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: fronts %v, want %v", c.points, got, c.want)
		}
	}
}

// Maximised objectives: accuracy up, latency down.
func TestParetoRanksMixedModes(t *testing.T) {
	pts := [][]float64{{0.9, 30}, {0.8, 10}, {0.85, 40}, {0.7, 5}, {0.9, 20}, {0.6, 50}}
	got := paretoRanks(pts, []bool{false, true})
	// {0.9,20} beats {0.9,30} and {0.85,40}; {0.8,10}, {0.7,5} are on the front; {0.6,50}
	// is beaten by {0.85,40}, which {0.9,30} beats.
	want := []int{2, 1, 3, 1, 1, 4}
	if !slices.Equal(got, want) {
		t.Fatalf("fronts %v, want %v", got, want)
	}
}

// Against the definition, on random points: no point dominates another of its front, and
// each point past the first is dominated by one of the front before.
func TestParetoRanksDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pts := make([][]float64, 300)
	for i := range pts {
		pts[i] = []float64{float64(r.IntN(20)), float64(r.IntN(20)), r.Float64()}
	}
	lower := []bool{true, false, true}
	ranks := paretoRanks(pts, lower)
	loss := func(p []float64) []float64 { return []float64{p[0], -p[1], p[2]} }
	for i := range pts {
		beaten := false
		for j := range pts {
			d := dominates(loss(pts[j]), loss(pts[i]))
			if d && ranks[j] == ranks[i] {
				t.Fatalf("%v dominates %v in front %d", pts[j], pts[i], ranks[i])
			}
			beaten = beaten || (d && ranks[j] == ranks[i]-1)
		}
		if ranks[i] > 1 && !beaten {
			t.Fatalf("%v in front %d, but none of front %d dominates it", pts[i], ranks[i], ranks[i]-1)
		}
	}
}

func BenchmarkParetoRanks10000(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	pts := make([][]float64, 10000)
	for i := range pts {
		pts[i] = []float64{r.Float64(), r.Float64()}
	}
	for b.Loop() {
		paretoRanks(pts, []bool{true, false})
	}
}

// The two-objective path agrees with the general one, on points with many ties.
func TestParetoRanks2AgreesWithGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		pts := make([][]float64, 200)
		for i := range pts {
			pts[i] = []float64{float64(r.IntN(8)), float64(r.IntN(8))}
		}
		lower := []bool{r.IntN(2) == 0, r.IntN(2) == 0}
		two := paretoRanks(pts, lower)
		// the general path, by a third objective that never differs
		three := make([][]float64, len(pts))
		for i, p := range pts {
			three[i] = []float64{p[0], p[1], 0}
		}
		if all := paretoRanks(three, append(lower, true)); !slices.Equal(two, all) {
			t.Fatalf("two objectives %v, general %v, on %v %v", two, all, pts, lower)
		}
	}
}

func BenchmarkParetoRanks10000x3(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	pts := make([][]float64, 10000)
	for i := range pts {
		pts[i] = []float64{r.Float64(), r.Float64(), r.Float64()}
	}
	for b.Loop() {
		paretoRanks(pts, []bool{true, false, true})
	}
}
