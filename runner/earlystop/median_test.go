package earlystop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fullMedian is median stopping as written before its state was bounded: every value of
// every trial kept and summed again at each step. TestMedianBoundedState holds the bounded
// rule to its decisions.
type fullMedian struct {
	c      Config
	curves map[string][]float64 // by step - 1; NaN: no value
	avgs   map[int]map[string]float64
}

func (f *fullMedian) observe(trial string, step int, v float64) bool {
	cv := f.curves[trial]
	if len(cv) >= step {
		cv = cv[:step-1] // drawn again, or a retried attempt from 1
	}
	cv = append(cv, v)
	f.curves[trial] = cv
	w := worst(f.c.Mode)
	sum, n, best := 0.0, 0, w
	for _, x := range cv {
		if usable(x) {
			sum, n = sum+x, n+1
			if better(f.c.Mode, x, best) {
				best = x
			}
		}
	}
	avg := w
	if n > 0 {
		avg = sum / float64(n)
	}
	if !usable(v) {
		best = w
	}
	if !decides(f.c.Grace, step) {
		return false
	}
	if f.avgs[step] == nil {
		f.avgs[step] = map[string]float64{}
	}
	var others []float64
	for k, x := range f.avgs[step] {
		if k != trial {
			others = append(others, x)
		}
	}
	f.avgs[step][trial] = avg
	return len(others) >= f.c.MinTrials && better(f.c.Mode, percentile(others, 0.5), best)
}

// TestMedianAsFullRule: the bounded median decides as the rule that kept every value does,
// redrawn steps and retried attempts included.
func TestMedianAsFullRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		c := Config{Method: Median, Metric: "m", Mode: []string{"min", "max"}[round%2], Grace: 1 + rng.IntN(3), MinTrials: 1 + rng.IntN(3)}
		got, _ := New(c, nil)
		want := &fullMedian{c: c, curves: map[string][]float64{}, avgs: map[int]map[string]float64{}}
		last := map[string]int{}
		for i := range 300 {
			trial := fmt.Sprint("t", rng.IntN(5))
			step := last[trial] + 1
			switch x := rng.IntN(20); {
			case x == 0 && step > 1:
				step-- // the last step drawn again
			case x == 1:
				step = 1 // a retried attempt
			}
			last[trial] = step
			v := rng.Float64()
			if rng.IntN(10) == 0 {
				v = math.NaN()
			}
			d, _ := got.Observe(trial, step, v)
			if w := want.observe(trial, step, v); d.Stop != w {
				t.Fatalf("round %d (%+v), value %d: %s@%d=%g: stop %v (%s), the full rule says %v", round, c, i, trial, step, v, d.Stop, d.Reason, w)
			}
		}
	}
}

// TestDecidingSteps: median decides at every step from grace for 128 steps, then at ever
// fewer, the same steps for every trial.
func TestDecidingSteps(t *testing.T) {
	var got []int
	for step := 1; step <= 1_000_000; step++ {
		if decides(3, step) {
			got = append(got, step)
		}
	}
	if got[0] != 3 || got[127] != 130 || got[128] != 131 || len(got) > 1000 {
		t.Errorf("first steps %v, step 128: %d, 129: %d, %d in all", got[:3], got[127], got[128], len(got))
	}
}
