package importance

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The cases of Optuna's test_filter (tests/importance_tests/pedanova_tests/test_evaluator.py):
// which trials _QuantileFilter keeps. A target of values[i] is the trials' i-th value,
// lower better.
func TestQuantileFilter(t *testing.T) {
	values := func(vs ...float64) []Trial {
		out := make([]Trial, len(vs))
		for i, v := range vs {
			out[i].Value = v
		}
		return out
	}
	desc := values(9, 8, 7, 6, 5, 4, 3, 2, 1, 0)  // _VALUES
	first := values(0, 1, 2, 3, 4, 5, 6, 7, 8, 9) // _MULTI_VALUES, t.values[0]
	second := desc                                // _MULTI_VALUES, t.values[1]
	span := func(lo, hi int) []int {
		var out []int
		for i := lo; i < hi; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, c := range []struct {
		q           float64
		lowerBetter bool
		trials      []Trial
		want        []int
	}{
		{0.1, true, values(1, 2), []int{0}},
		{0.49, true, desc, span(5, 10)},
		{0.5, true, desc, span(5, 10)},
		{0.51, true, desc, span(4, 10)},
		{1.0, true, values(1, 2), []int{0, 1}},
		{0.49, false, desc, span(0, 5)},
		{0.5, false, desc, span(0, 5)},
		{0.51, false, desc, span(0, 6)},
		{0.49, true, first, span(0, 5)},
		{0.5, true, first, span(0, 5)},
		{0.51, true, first, span(0, 6)},
		{0.49, true, second, span(5, 10)},
		{0.5, true, second, span(5, 10)},
		{0.51, true, second, span(4, 10)},
	} {
		kept := topQuantile(c.trials, c.q, c.lowerBetter)
		var got []int
		for i := range c.trials {
			if kept[i] {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("quantile %v, lower better %v: kept %v, want %v", c.q, c.lowerBetter, got, c.want)
		}
	}
}

// study is n trials of three parameters drawn at random (seeded), with objective f.
func study(n int, seed uint64, f func(x, y float64, opt string) float64) []Trial {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]Trial, n)
	for i := range out {
		x, y := r.Float64(), r.Float64()*10-5
		opt := []string{"adam", "sgd", "rmsprop"}[r.IntN(3)]
		out[i] = Trial{Params: map[string]string{
			"x": strconv.FormatFloat(x, 'g', -1, 64), "y": strconv.FormatFloat(y, 'g', -1, 64), "opt": opt,
		}, Value: f(x, y, opt)}
	}
	return out
}

// As Optuna's test_n_trials_less_than_two: under two trials there is no importance (and it
// says so), from two on there is.
func TestTooFewTrials(t *testing.T) {
	f := func(x, y float64, _ string) float64 { return x + y }
	for n := range 3 {
		r := Evaluate(study(n, 7, f), true, nil)
		switch {
		case n == 0 && (r.Params != nil || r.Trials != 0):
			t.Errorf("no trials: %+v", r)
		case n == 1 && (r.Params != nil || !strings.Contains(r.Note, "too few trials: 1 finished with a value, PED-ANOVA needs at least 2")):
			t.Errorf("one trial: %+v", r)
		case n == 2 && (len(r.Params) != 3 || r.Params[0].Importance == r.Params[2].Importance):
			t.Errorf("two trials: want importances that differ, got %+v", r)
		case n == 2 && !strings.Contains(r.Note, "few trials: 1 in the top 10%, fewer than the 5 PED-ANOVA needs to be stable (50 trials)"):
			t.Errorf("two trials: want the note that they are few, got %q", r.Note)
		}
	}
}

// As Optuna's test_direction: the same trials rank the other way when higher is better.
func TestDirection(t *testing.T) {
	f := func(x, y float64, _ string) float64 { return x*x + y }
	trials := study(20, 3, f)
	lo, hi := Evaluate(trials, true, nil), Evaluate(trials, false, nil)
	if slices.Equal(lo.Params, hi.Params) {
		t.Fatalf("min and max gave the same importances: %+v", lo.Params)
	}
}

func byName(r Result) map[string]Param {
	out := map[string]Param{}
	for _, p := range r.Params {
		out[p.Name] = p
	}
	return out
}

// Data whose answer is known: the objective is x alone (y and opt are noise), so x takes
// almost all the importance, whichever way is better; its sign is the objective's.
func TestKnownAnswerOneParameterDecides(t *testing.T) {
	trials := study(400, 11, func(x, _ float64, _ string) float64 { return 3*x + 1 })
	for _, lowerBetter := range []bool{true, false} {
		r := Evaluate(trials, lowerBetter, nil)
		p := byName(r)
		if r.Params[0].Name != "x" || p["x"].Importance < 0.9 || p["y"].Importance > 0.05 || p["opt"].Importance > 0.05 {
			t.Errorf("lower better %v: want x to decide, got %+v", lowerBetter, r.Params)
		}
		if p["x"].Sign != "+" || p["x"].Correlation < 0.999 || p["opt"].Sign != "" {
			t.Errorf("want x's correlation +1 and none for a choice, got %+v", r.Params)
		}
		if r.Trials != 400 || r.Top != 40 || r.Note != "" || r.Quantile != 0.1 || r.MinTrials != 2 {
			t.Errorf("want 400 trials, 40 on top and no note, got %+v", r)
		}
	}
	neg := Evaluate(study(400, 11, func(x, _ float64, _ string) float64 { return -x }), true, nil)
	if p := byName(neg); p["x"].Sign != "-" {
		t.Errorf("objective -x: want x's sign -, got %+v", neg.Params)
	}
}

// A choice that decides: adam is always best; the numbers are noise.
func TestKnownAnswerChoiceDecides(t *testing.T) {
	trials := study(300, 5, func(_, _ float64, opt string) float64 {
		return map[string]float64{"adam": 0.1, "sgd": 0.5, "rmsprop": 0.9}[opt]
	})
	r := Evaluate(trials, true, nil)
	if r.Params[0].Name != "opt" || r.Params[0].Importance < 0.9 {
		t.Fatalf("want opt to decide, got %+v", r.Params)
	}
}

// A trial with no value (NaN) is left out; a parameter that never varies has no importance.
func TestNonFiniteAndConstant(t *testing.T) {
	trials := study(100, 9, func(x, _ float64, _ string) float64 { return x })
	for i := range trials {
		trials[i].Params["seed"] = "42"
	}
	trials = append(trials, Trial{Params: map[string]string{"x": "0.5", "y": "0", "opt": "sgd", "seed": "1"}, Value: nan()})
	r := Evaluate(trials, true, nil)
	if r.Trials != 100 || byName(r)["seed"].Importance != 0 {
		t.Fatalf("want 100 trials and seed of no importance, got %+v", r)
	}
}

func nan() float64 { v := 0.0; return v / v }

// 10,000 trials of 8 parameters (issue 38: importance in under 1 s).
func BenchmarkEvaluate10000x8(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	trials := make([]Trial, 10000)
	for i := range trials {
		p := map[string]string{"opt": []string{"adam", "sgd", "rmsprop"}[r.IntN(3)]}
		v := 0.0
		for k := range 7 {
			x := r.Float64()
			p["p"+strconv.Itoa(k)] = strconv.FormatFloat(x, 'g', -1, 64)
			v += float64(k) * x
		}
		trials[i] = Trial{Params: p, Value: v}
	}
	for b.Loop() {
		Evaluate(trials, true, map[string]bool{"p0": true})
	}
}
