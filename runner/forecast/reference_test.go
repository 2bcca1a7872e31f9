package forecast

import (
	"math"
	"testing"

	"github.com/runall/runall/runner/earlystop"
)

// crossing is bench/curves/crossing.py's curve without its noise: the fast starters level
// off lowest.
func crossing(tau, ceiling float64) func(float64) float64 {
	return func(x float64) float64 { return ceiling - (ceiling-0.1)*math.Exp(-x/tau) }
}

var (
	fastCurve = crossing(1, 0.86)
	slowCurve = crossing(5, 0.95)
)

// feedTo reports f's values at steps 1..to.
func feedTo(t *testing.T, r *Rule, trial string, f func(float64) float64, to int) earlystop.Decision {
	t.Helper()
	var d earlystop.Decision
	for s := 1; s <= to; s++ {
		var err error
		if d, err = r.Observe(trial, s, f(float64(s))); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// A trial whose prefix matches a reference that reached max is forecast, from its second
// point, to end where the reference ended, with a narrow band; and one just like the best
// stops at once against a min-delta it cannot beat.
func TestReferenceMatchGetsItsEnd(t *testing.T) {
	r, _ := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: 2, Max: 27, MinDelta: 0.01}, nil)
	feedTo(t, r, "slow", slowCurve, 27)
	feedTo(t, r, "fast", fastCurve, 27)
	d := feedTo(t, r, "slow-again", slowCurve, 2)
	f := d.Forecast
	if f == nil || f.References != 2 || !f.Informed {
		t.Fatalf("no forecast from the references at step 2: %+v", f)
	}
	if math.Abs(f.Median-slowCurve(27)) > 0.005 || f.High-f.Low > 0.05 {
		t.Errorf("forecast %v (band %v to %v), want the reference's end %v", f.Median, f.Low, f.High, slowCurve(27))
	}
	if !d.Stop {
		t.Errorf("a copy of the best with min-delta 0.01 went on: chance %v", f.Chance)
	}
}

// Crossing curves: a slow starter among fast references alone is forecast with a wide band
// (no reference is like it) and goes on; once a slow reference finished, the next slow
// starter is forecast high, above the fast ones' ends, and a fast one stops at grace.
func TestReferenceCrossingSlowStarters(t *testing.T) {
	r, _ := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: 2, Max: 27}, nil)
	feedTo(t, r, "fast-1", fastCurve, 27)
	feedTo(t, r, "fast-2", func(x float64) float64 { return fastCurve(x) + 0.004 }, 27)
	d := feedTo(t, r, "slow-1", slowCurve, 2)
	if d.Stop || d.Forecast == nil || d.Forecast.Informed || d.Forecast.Chance < 0.05 {
		t.Fatalf("a slow starter among fast references: %+v %q", d.Forecast, d.Reason)
	}
	if d := feedTo(t, r, "slow-1", slowCurve, 27); d.Stop {
		t.Fatalf("the slow reference stopped: %q", d.Reason)
	}
	d = feedTo(t, r, "slow-2", func(x float64) float64 { return slowCurve(x) - 0.003 }, 2)
	if f := d.Forecast; f == nil || !f.Informed || f.Median < fastCurve(27)+0.05 {
		t.Fatalf("a slow starter once a slow reference finished: %+v", f)
	}
	if d := feedTo(t, r, "fast-3", func(x float64) float64 { return fastCurve(x) + 0.002 }, 2); !d.Stop {
		t.Errorf("a fast starter went on against the slow reference's end: %+v", d.Forecast)
	}
}

// Without references, and before the families have their points, there is no forecast: the
// trial goes on; with five points the families forecast alone, as before (informed: fitted).
func TestReferenceNoneFallsBack(t *testing.T) {
	r, _ := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: 2, Max: 27}, nil)
	if d := feedTo(t, r, "a", slowCurve, 4); d.Forecast != nil || d.Stop {
		t.Fatalf("a forecast with no reference and 4 points: %+v", d.Forecast)
	}
	d := feedTo(t, r, "b", good, 5)
	if f := d.Forecast; f == nil || f.References != 0 || !f.Informed {
		t.Fatalf("the families' forecast at 5 points: %+v", f)
	}
	if _, ok := FromReferences([]float64{0.5, 0.6}, nil, 1, 0); ok {
		t.Error("a forecast from no references")
	}
}

// The references' order does not change the forecast.
func TestReferenceOrderFree(t *testing.T) {
	refs := []Reference{{"a", []float64{0.3, 0.5}, 0.9}, {"b", []float64{0.31, 0.52}, 0.88}, {"c", []float64{0.6, 0.7}, 0.8}}
	p1, _ := FromReferences([]float64{0.3, 0.51}, refs, 0.6, 0)
	refs[0], refs[2] = refs[2], refs[0]
	p2, _ := FromReferences([]float64{0.3, 0.51}, refs, 0.6, 0)
	if p1.Quantile(0.5) != p2.Quantile(0.5) || p1.Quantile(0.05) != p2.Quantile(0.05) {
		t.Errorf("%v != %v", p1, p2)
	}
}
