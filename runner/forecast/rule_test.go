package forecast

import (
	"math"
	"strings"
	"testing"

	"github.com/runall/runall/runner/earlystop"
)

func newRule(t *testing.T, mode string, grace int) *Rule {
	t.Helper()
	r, err := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: mode, Grace: grace, Max: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// feed reports f's values for steps from..to and returns the step the rule stopped the
// trial at (0: never) with its decision.
func feed(t *testing.T, r *Rule, trial string, f func(float64) float64, from, to int) (int, earlystop.Decision) {
	t.Helper()
	for s := from; s <= to; s++ {
		d, err := r.Observe(trial, s, f(float64(s)))
		if err != nil {
			t.Fatal(err)
		}
		if d.Stop {
			return s, d
		}
	}
	return 0, earlystop.Decision{}
}

var (
	good = func(x float64) float64 { return 0.9 - 0.4*math.Pow(x, -0.7) }
	bad  = func(x float64) float64 { return 0.6 - 0.3*math.Pow(x, -0.7) }
)

// A trial that is clearly losing against one that reached max is stopped, not before grace,
// with the figures it was stopped by; the winner is never stopped.
func TestRuleStopsTheLoserAfterGrace(t *testing.T) {
	r := newRule(t, "max", 6)
	if s, _ := feed(t, r, "good", good, 1, 30); s != 0 {
		t.Fatalf("the best trial was stopped at step %d", s)
	}
	s, d := feed(t, r, "bad", bad, 1, 30)
	if s != 6 {
		t.Fatalf("the losing trial was stopped at step %d, want 6 (grace)", s)
	}
	f := d.Forecast
	if f == nil || !f.Stop || !f.Reached || f.Incumbent != good(30) || f.Chance >= 0.05 || f.Low > f.Median || f.Median > f.High {
		t.Fatalf("figures %+v", f)
	}
	if math.Abs(f.Median-bad(30)) > 0.03 || !strings.Contains(d.Reason, "the best value reached at step 30") {
		t.Errorf("median %v (true end %v); reason %q", f.Median, bad(30), d.Reason)
	}
}

// Before any trial reached max, the incumbent is the best of the others' forecasts (each
// the end it reaches with 95% chance, or the best value it has shown when that is lower);
// a trial is never compared with its own, and one that stopped is no incumbent (its forecast
// is withdrawn: it will not get there). No forecast before every family can be fitted (5
// points).
func TestRuleIncumbentIsTheBestForecast(t *testing.T) {
	st := &earlystop.MemoryStore{}
	r, _ := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: 3, Max: 30}, st)
	if s, _ := feed(t, r, "good", good, 1, 10); s != 0 {
		t.Fatalf("the best trial was stopped at step %d", s)
	}
	s, d := feed(t, r, "bad", bad, 1, 10)
	if s == 0 || d.Forecast.Reached || !strings.Contains(d.Reason, "the best of the other trials' forecasts, each the end it reaches with 95% chance") {
		t.Fatalf("the losing trial: stopped at %d, %+v, %q", s, d.Forecast, d.Reason)
	}
	if s != 5 || d.Forecast.Incumbent != good(10) {
		t.Errorf("stopped at %d (want 5); incumbent %v, want the best one's best value so far %v (below its 95%% end)", s, d.Forecast.Incumbent, good(10))
	}
	forecasts, _ := st.Rung(forecastStep)
	if forecasts["bad"] != -math.MaxFloat64 || forecasts["good"] < 0.8 {
		t.Errorf("forecasts kept after bad stopped: %v", forecasts)
	}
}

// A trial whose value so far is above the incumbent is never stopped, even when its curve
// falls (it overfits) and its forecast ends below.
func TestRuleNeverStopsOneAboveTheBest(t *testing.T) {
	r := newRule(t, "max", 1)
	feed(t, r, "first", func(float64) float64 { return 0.7 }, 30, 30) // reached max at 0.7
	falling := func(x float64) float64 { return 0.95 - 0.01*x }       // 0.94, 0.93, ... 0.65 at 30
	if s, d := feed(t, r, "falling", falling, 1, 29); s != 0 {
		t.Errorf("stopped at step %d: %s", s, d.Reason)
	}
}

// Under mode min, lower is better: the trial whose loss stays high stops, the low one goes on.
func TestRuleMin(t *testing.T) {
	r := newRule(t, "min", 5)
	low := func(x float64) float64 { return 1 - good(x) }
	high := func(x float64) float64 { return 1 - bad(x) }
	if s, _ := feed(t, r, "low", low, 1, 30); s != 0 {
		t.Fatalf("the best trial was stopped at step %d", s)
	}
	s, d := feed(t, r, "high", high, 1, 30)
	if s != 5 || d.Forecast.Low > d.Forecast.High || math.Abs(d.Forecast.Median-high(30)) > 0.03 {
		t.Errorf("stopped at %d, figures %+v", s, d.Forecast)
	}
}

// A step without a usable value from grace on stops the trial, as under asha and median;
// alone (no incumbent), a trial is never stopped for its forecast.
func TestRuleNaNAndAlone(t *testing.T) {
	r := newRule(t, "max", 2)
	if s, _ := feed(t, r, "alone", bad, 1, 29); s != 0 {
		t.Errorf("a trial with nothing to beat was stopped at step %d", s)
	}
	if s, d := feed(t, r, "diverged", func(float64) float64 { return math.NaN() }, 1, 5); s != 2 || d.Forecast != nil {
		t.Errorf("a diverged trial: stopped at %d (%q)", s, d.Reason)
	}
}

// Two rules that share a store (two runalls of a sweep under --claims) decide with each
// other's trials: one's trial that reached max is the other's incumbent.
func TestRuleSharedStore(t *testing.T) {
	st := &earlystop.MemoryStore{}
	c := earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: 5, Max: 30}
	a, _ := New(c, st)
	b, _ := New(c, st)
	feed(t, a, "good", good, 1, 30)
	s, d := feed(t, b, "bad", bad, 1, 30)
	if s != 5 || !d.Forecast.Reached || d.Forecast.Incumbent != good(30) {
		t.Errorf("stopped at %d by %+v", s, d.Forecast)
	}
}

// With min-delta, a trial is stopped when its chance of ending better than the best by more
// than min-delta is below min-chance: one forecast to end a hair above the incumbent goes on
// without it and stops with it; one whose value is already above the incumbent never stops.
func TestRuleMinDelta(t *testing.T) {
	near := func(x float64) float64 { return good(x) + 0.0005 }
	for _, tc := range []struct {
		delta float64
		stops bool
	}{{0, false}, {0.02, true}} {
		r, err := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: 5, Max: 30, MinDelta: tc.delta}, nil)
		if err != nil {
			t.Fatal(err)
		}
		feed(t, r, "good", good, 1, 30)
		s, d := feed(t, r, "near", near, 1, 30)
		if (s != 0) != tc.stops || tc.stops && !strings.Contains(d.Reason, "by more than min-delta 0.02") {
			t.Errorf("min-delta %v: near stopped at %d (%q)", tc.delta, s, d.Reason)
		}
		if s != 0 && near(float64(s)) >= good(30) {
			t.Errorf("min-delta %v: stopped at step %d with %v, above the best %v", tc.delta, s, near(float64(s)), good(30))
		}
	}
}

// TestRuleMinDeltaOnlyAgainstReached: min-delta counts against a value reached at max, not
// against another trial's forecast (itself a guess with its margin, its 95% end): a trial
// alike the one whose forecast is the incumbent goes on under a min-delta it could never
// beat it by, and stops once that one reached max.
func TestRuleMinDeltaOnlyAgainstReached(t *testing.T) {
	r, err := New(earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", Grace: 5, Max: 30, MinDelta: 0.02}, nil)
	if err != nil {
		t.Fatal(err)
	}
	feed(t, r, "good", good, 1, 10)
	if s, d := feed(t, r, "alike", good, 1, 10); s != 0 {
		t.Errorf("alike stopped at %d against a forecast: %q", s, d.Reason)
	}
	feed(t, r, "good", good, 11, 30) // reached: now min-delta counts
	if s, d := feed(t, r, "alike", good, 11, 29); s != 11 || !strings.Contains(d.Reason, "by more than min-delta 0.02") {
		t.Errorf("alike stopped at %d against the value reached, want 11: %q", s, d.Reason)
	}
}
