package importance

import (
	"math"
	"strconv"
	"testing"
)

// The cases of Optuna's tests/importance_tests/pedanova_tests/test_scott_parzen_estimator.py
// (Optuna 5.0.0.dev, commit 1d8ce7bb), with their expected numbers.

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func nearAll(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if !near(got[i], want[i], tol) {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

// nonzero is np.flatnonzero(counts) and counts[obs].
func nonzero(counts []float64) (obs, w []float64) {
	for i, c := range counts {
		if c > 0 {
			obs, w = append(obs, float64(i)), append(w, c)
		}
	}
	return obs, w
}

func TestBuildIntScottParzenEstimator(t *testing.T) {
	for _, c := range []struct {
		counts, mu, sigma, weights []float64
	}{
		{[]float64{0, 0, 0, 1}, []float64{3, 1.5}, []float64{0.304878, 4}, []float64{1, 0}},
		{[]float64{0, 0, 100, 0}, []float64{2, 1.5}, []float64{0.304878, 4}, []float64{1, 0}},
		{[]float64{1, 2, 3, 4}, []float64{0, 1, 2, 3, 1.5}, []float64{0.7043276, 0.7043276, 0.7043276, 0.7043276, 4}, []float64{0.1, 0.2, 0.3, 0.4, 0}},
		{[]float64{90, 0, 0, 90}, []float64{0, 3, 1.5}, []float64{0.5638226, 0.5638226, 4}, []float64{0.5, 0.5, 0}},
		{[]float64{1, 0, 0, 1}, []float64{0, 3, 1.5}, []float64{1.9556729, 1.9556729, 4}, []float64{0.5, 0.5, 0}},
	} {
		obs, w := nonzero(c.counts)
		e := newNumerical(obs, w, len(c.counts), 0)
		nearAll(t, "mu", e.mus, c.mu, 1e-6)
		nearAll(t, "sigma", e.sigmas, c.sigma, 1e-6)
		nearAll(t, "weights", e.weights, c.weights, 1e-9)
	}
}

func TestBuildCatScottParzenEstimator(t *testing.T) {
	for _, c := range []struct{ counts, weights []float64 }{
		{[]float64{0, 0, 0, 1}, []float64{1, 0}},
		{[]float64{0, 0, 100, 0}, []float64{1, 0}},
		{[]float64{1, 2, 3, 4}, []float64{0.1, 0.2, 0.3, 0.4, 0}},
		{[]float64{90, 0, 0, 90}, []float64{0.5, 0.5, 0}},
		{[]float64{1, 0, 0, 1}, []float64{0.5, 0.5, 0}},
	} {
		obs, w := nonzero(c.counts)
		e := newCategorical(obs, w, len(c.counts), 0)
		nearAll(t, "weights", e.weights, c.weights, 1e-9)
		// np.identity(n)[counts > 0] then a row of zeros: the prior, of weight 0.
		if len(e.cat) != len(obs)+1 {
			t.Fatalf("counts %v: %d kernels, want %d", c.counts, len(e.cat), len(obs)+1)
		}
		for k, o := range obs {
			for x := range c.counts {
				want := 0.0
				if x == int(o) {
					want = 1
				}
				if e.cat[k][x] != want {
					t.Fatalf("counts %v: kernel %d = %v", c.counts, k, e.cat[k])
				}
			}
		}
		for _, x := range e.cat[len(obs)] {
			if x != 0 {
				t.Fatalf("counts %v: the prior's kernel %v, want zeros", c.counts, e.cat[len(obs)])
			}
		}
	}
}

func strs(fs ...float64) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return out
}

func TestCountNumericalParamInGrid(t *testing.T) {
	lin := make([]float64, 100) // np.linspace(-5, 5, 100)
	for i := range lin {
		lin[i] = -5 + 10*float64(i)/99
	}
	for _, c := range []struct {
		name string
		sp   space
		vals []string
		want []float64
	}{
		{"int", space{low: -5, high: 5, ints: true}, strs(-5, -5, 1, 5, 5), []float64{2, 0, 1, 0, 2}},
		{"int log", space{low: 1, high: 8, ints: true, log: true}, strs(1, 2, 3, 4, 5, 6, 7, 8), []float64{1, 1, 3, 3}},
		{"float", space{low: -5, high: 5}, strs(lin...), []float64{13, 25, 24, 25, 13}},
		{"float log", space{low: 1, high: 8, log: true}, strs(1, 2, 3, 4, 5, 6, 7, 8), []float64{1, 1, 1, 3, 2}},
	} {
		nearAll(t, c.name, c.sp.count(c.vals, 5), c.want, 0)
	}
}

func TestCountCategoricalParamInGrid(t *testing.T) {
	sp := space{choices: []string{"a", "b", "c", "d"}}
	got := sp.count([]string{"a", "b", "a", "d", "a", "a", "d"}, Steps)
	nearAll(t, "categorical", got, []float64{4, 1, 0, 2}, 0)
}

// The estimator's pdf is a distribution over its grid, for numbers and for choices.
func TestParzenPDFSumsToOne(t *testing.T) {
	for _, sp := range []space{{low: 0, high: 1}, {low: 1, high: 1000, log: true}, {low: 0, high: 7, ints: true}, {choices: []string{"a", "b", "c"}}} {
		vals := strs(0.5, 0.75, 1)
		if sp.choices != nil {
			vals = []string{"a", "b", "b"}
		}
		sum := 0.0
		for _, p := range sp.estimate(vals, Steps, PriorWeight).pdf() {
			sum += p
		}
		if !near(sum, 1, 1e-9) {
			t.Errorf("%+v: pdf sums to %v", sp, sum)
		}
	}
}
