package earlystop

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
)

// logAxis is a loguniform key, as the plan's sample: makes one.
type logAxis struct {
	name     string
	low, hig float64
}

func (a logAxis) Name() string { return a.name }
func (a logAxis) Draw(u float64) string {
	return strconv.FormatFloat(math.Exp(math.Log(a.low)+u*(math.Log(a.hig)-math.Log(a.low))), 'g', 6, 64)
}
func (a logAxis) Perturb(v string, f float64) (string, bool) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatFloat(min(max(x*f, a.low), a.hig), 'g', 6, 64), true
}

// listAxis is a matrix key: perturbing moves to a neighbour.
type listAxis struct {
	name   string
	values []string
}

func (a listAxis) Name() string          { return a.name }
func (a listAxis) Draw(u float64) string { return a.values[int(u*float64(len(a.values)))] }
func (a listAxis) Perturb(v string, f float64) (string, bool) {
	i := slices.Index(a.values, v)
	if i < 0 {
		return "", false
	}
	if f > 1 {
		i = min(i+1, len(a.values)-1)
	} else {
		i = max(i-1, 0)
	}
	return a.values[i], true
}

func pbtSpace() []Axis {
	return []Axis{logAxis{"lr", 1e-4, 1e-1}, listAxis{"width", []string{"8", "32", "128"}}}
}

// population9 is 9 trials, worst learning rate first.
func population9() []Member {
	var out []Member
	for _, lr := range []string{"0.0001", "0.0003", "0.001", "0.002", "0.003", "0.005", "0.008", "0.01", "0.03"} {
		out = append(out, Member{Key: "p-" + lr, Params: []Param{{"lr", lr}, {"width", "32"}, {"seed", "1"}}})
	}
	return out
}

// TestPBTExploitsAndExplores is point 4 of issue 27: every interval steps the bottom
// quantile continues from a copy of a top-quantile trial's checkpoint with perturbed or
// resampled values from the block's space; the same decisions whatever the order and the
// runall; the lineage says who continued from whom, at which step, with which values.
func TestPBTExploitsAndExplores(t *testing.T) {
	c := Config{Method: PBT, Metric: "acc", Mode: "max", Max: 27,
		Population: Population{Interval: 9, Quantile: 0.25, Perturb: []float64{0.8, 1.25}, Resample: 0.25}}
	var first outcome
	var firstBoard Board
	var r *Rounds
	for name, order := range orders(9) {
		for _, slots := range []int{1, 4, 9} {
			members := population9()
			r, _ = NewRounds(c, "block", members, pbtSpace())
			got, b := simulate(t, r, members, order, slots, 27)
			if first == nil {
				first, firstBoard = got, b
			} else if !maps.Equal(first, got) {
				t.Fatalf("order %s, %d at once: %v, want %v", name, slots, got, first)
			}
		}
	}
	if len(firstBoard.Values) != 2 || firstBoard.Values[9] == nil || firstBoard.Values[18] == nil {
		t.Fatalf("rounds at %v, want steps 9 and 18 (max 27)", slices.Collect(maps.Keys(firstBoard.Values)))
	}
	exploits := 0
	for _, m := range population9() {
		for _, e := range r.Lineage(firstBoard, m.Key) {
			exploits++
			ranked := r.rank(firstBoard, slices.Collect(maps.Keys(firstBoard.Values[e.Step])), e.Step)
			if i := slices.Index(ranked, e.From); i < 0 || i >= 2 {
				t.Errorf("%s at step %d continued from %s, ranked %d: want one of the top 2 of 9", m.Key, e.Step, e.From, i)
			}
			if i := slices.Index(ranked, m.Key); i < 7 {
				t.Errorf("%s exploited at step %d but ranked %d of 9: want the bottom 2", m.Key, e.Step, i)
			}
			lr, _ := strconv.ParseFloat(paramValue(e.Params, "lr"), 64)
			if lr < 1e-4 || lr > 1e-1 || !slices.Contains([]string{"8", "32", "128"}, paramValue(e.Params, "width")) {
				t.Errorf("explored values %v outside the space", e.Params)
			}
			if paramValue(e.Params, "seed") != "1" {
				t.Errorf("a value outside the space changed: %v", e.Params)
			}
		}
	}
	if exploits != 4 {
		t.Errorf("%d exploits, want 2 at each of 2 rounds", exploits)
	}
}

// TestPBTExplore: a value is drawn again with probability resample, else multiplied by a
// perturb factor, within the space.
func TestPBTExplore(t *testing.T) {
	tests := []struct {
		resample float64
		want     func(old, new float64) bool
	}{
		{0, func(o, n float64) bool { return math.Abs(n/o-0.8) < 1e-4 || math.Abs(n/o-1.25) < 1e-4 }},
		{1, func(o, n float64) bool { return n >= 1e-4 && n <= 1e-1 }},
	}
	for _, tc := range tests {
		c := Config{Method: PBT, Metric: "acc", Mode: "max",
			Population: Population{Interval: 1, Perturb: []float64{0.8, 1.25}, Resample: tc.resample}}
		r, _ := NewRounds(c, "b", nil, pbtSpace())
		changed := 0
		for i := range 200 {
			rng := r.draws(i, "x")
			out := r.explore(rng, []Param{{"lr", "0.01"}})
			n, _ := strconv.ParseFloat(out[0].Value, 64)
			if !tc.want(0.01, n) {
				t.Errorf("resample %g: 0.01 became %g", tc.resample, n)
			}
			if n != 0.01 {
				changed++
			}
		}
		if changed < 190 {
			t.Errorf("resample %g: only %d of 200 values changed", tc.resample, changed)
		}
	}
}

// TestPBTExploreOnly: with explore set, only those keys change; the others are the donor's.
func TestPBTExploreOnly(t *testing.T) {
	c := Config{Method: PBT, Metric: "acc", Mode: "max",
		Population: Population{Interval: 1, Perturb: []float64{0.8, 1.25}, Resample: 0.5, Explore: []string{"lr"}}}
	r, _ := NewRounds(c, "b", nil, pbtSpace())
	for i := range 50 {
		out := r.explore(r.draws(i, "x"), []Param{{"lr", "0.01"}, {"width", "32"}})
		if out[1].Value != "32" || out[0].Value == "0.01" {
			t.Fatalf("explore lr only: %v", out)
		}
	}
}
