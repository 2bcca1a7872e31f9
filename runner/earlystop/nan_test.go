package earlystop

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestNaNStepCountsAsWorst: a trial that prints nan at every step (it diverged) is stopped
// under asha at its first rung, and under median as soon as another trial's value is there
// to compare, instead of keeping
// its GPU to the end; what the rules record for it is finite, so that a shared store can
// write it.
func TestNaNStepCountsAsWorst(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		c    Config
		obs  []obs
	}{
		{name: "asha max: nan at a rung with a value is last",
			c:   Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3},
			obs: []obs{{"a", 1, 0.1, false}, {"nan", 1, nan, true}}},
		{name: "asha min: nan at a rung with a value is last",
			c:   Config{Method: ASHA, Metric: "loss", Mode: "min", Grace: 1, Reduction: 3},
			obs: []obs{{"a", 1, 1e300, false}, {"nan", 1, nan, true}}},
		{name: "asha: trials with no value are stopped even when first at the rung",
			c:   Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3},
			obs: []obs{{"nan1", 1, nan, true}, {"nan2", 1, math.Inf(1), true}, {"a", 1, 0.2, false}}},
		{name: "asha min: no value at a later rung, alone there",
			c:   Config{Method: ASHA, Metric: "loss", Mode: "min", Grace: 1, Reduction: 3, Max: 9},
			obs: []obs{{"a", 1, 0.5, false}, {"a", 3, nan, true}}},
		{name: "median max: nan at every step",
			c: Config{Method: Median, Metric: "acc", Mode: "max", Grace: 1, MinTrials: 1},
			obs: []obs{{"a", 1, 0.1, false}, {"a", 2, 0.2, false},
				{"nan", 1, nan, true}, {"nan", 2, nan, true}}},
		{name: "median min: a trial that diverges after good steps",
			c: Config{Method: Median, Metric: "loss", Mode: "min", Grace: 1, MinTrials: 1},
			obs: []obs{{"a", 1, 2, false}, {"a", 2, 1.5, false}, {"a", 3, 1.4, false},
				{"b", 1, 1, false}, {"b", 2, 0.5, false}, {"b", 3, nan, true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &MemoryStore{}
			r, err := New(tc.c, st)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range tc.obs {
				d, err := r.Observe(o.trial, o.step, o.value)
				if err != nil {
					t.Fatal(err)
				}
				if d.Stop != o.stop {
					t.Errorf("#%d %s@%d=%g: stop %v (%s), want %v", i, o.trial, o.step, o.value, d.Stop, d.Reason, o.stop)
				}
				if d.Stop && !strings.Contains(d.Reason, "no usable value (nan)") {
					t.Errorf("#%d: reason %q does not say the value was missing", i, d.Reason)
				}
			}
			for step := 1; step <= 3; step++ {
				vals, _ := st.Rung(step)
				if _, err := json.Marshal(vals); err != nil {
					t.Errorf("step %d: the recorded values %v cannot be written to a shared store: %v", step, vals, err)
				}
			}
		})
	}
}
