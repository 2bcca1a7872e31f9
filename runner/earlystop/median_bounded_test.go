package earlystop

import (
	"testing"
)

// TestMedianBoundedState: median keeps a constant amount per trial and records at a bounded
// number of steps (2 trials of 200,000 steps kept every value and took 40 s), and decides as
// the rule that kept every value does, redrawn steps and retried attempts included.
func TestMedianBoundedState(t *testing.T) {
	c := Config{Method: Median, Metric: "loss", Mode: "min", Grace: 2, MinTrials: 2}
	st := &MemoryStore{}
	rule, _ := New(c, st)
	const steps = 200_000
	for step := 1; step <= steps; step++ {
		for _, trial := range []string{"a", "b"} {
			if _, err := rule.Observe(trial, step, 1/float64(step)); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.mu.Lock()
	recorded := len(st.rungs)
	st.mu.Unlock()
	if recorded > 1100 {
		t.Errorf("%d steps of 2 trials: running averages recorded at %d steps, want about 1,000 at most", steps, recorded)
	}
	if allocs := testing.AllocsPerRun(1000, func() { rule.Observe("a", steps+3, 0.5) }); allocs != 0 {
		t.Errorf("a value at a step median does not decide at: %g allocations, want none", allocs)
	}
}
