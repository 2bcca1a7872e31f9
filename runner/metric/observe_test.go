package metric

import (
	"math"
	"testing"
)

// TestNaNStepIsObserved: a step whose value is nan or inf is told to the observer (as NaN,
// with its step), in every format a value is recognised in, so that early stopping counts it
// as the worst instead of never hearing of the trial.
func TestNaNStepIsObserved(t *testing.T) {
	pat, err := CompilePattern(`loss (?P<loss>\S+)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ format, line string }{
		{"runall-metric", "runall-metric loss=nan"},
		{"Keras", "10/10 [==============================] - 1s 5ms/step - loss: nan"},
		{"Hugging Face", "{'loss': inf, 'epoch': 1.0}"},
		{"metric-pattern", "loss -inf"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var s Set
			type told struct {
				v    float64
				step int
			}
			var got []told
			s.Observe(func(name string, v float64, step int) {
				if name == "loss" {
					got = append(got, told{v, step})
				}
			})
			r := NewReader(&s, Formats{Patterns: []*Pattern{pat}})
			r.Line("runall-metric loss=0.5")
			r.Line(tc.line)
			if len(got) != 2 || got[0] != (told{0.5, 1}) || !math.IsNaN(got[1].v) || got[1].step != 2 {
				t.Errorf("%q after a value: told %v, want 0.5 at step 1, NaN at step 2", tc.line, got)
			}
			if last, _, _ := s.Result(); last["loss"] != 0.5 {
				t.Errorf("the last value recorded is %v, want 0.5 (a missing value is not one)", last["loss"])
			}
		})
	}
}
