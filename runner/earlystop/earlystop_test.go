package earlystop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestRungs(t *testing.T) {
	tests := []struct {
		c    Config
		want []int
	}{
		{Config{Grace: 1, Reduction: 3, Max: 27}, []int{1, 3, 9}},
		{Config{Grace: 2, Reduction: 2, Max: 17}, []int{2, 4, 8, 16}},
		{Config{Grace: 1, Reduction: 3, Max: 28}, []int{1, 3, 9, 27}},
		{Config{Grace: 5, Reduction: 4, Max: 5}, nil},
	}
	for _, tc := range tests {
		if got := tc.c.Rungs(); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: rungs %v, want %v", tc.c, got, tc.want)
		}
	}
	if n := len((Config{Grace: 1, Reduction: 2}).Rungs()); n < 20 || n > maxRungs {
		t.Errorf("no max: %d rungs", n)
	}
}

// TestBudget holds Budget and ExpectedSteps against the rule itself: trials reaching each
// rung in random order, with random values, many times over.
func TestBudget(t *testing.T) {
	c := Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3}
	const n, steps, rounds = 27, 27, 3000
	budget := c.Budget(n, steps)
	if len(budget) != 3 || budget[0] != (RungBudget{1, 27}) || budget[1].Step != 3 || budget[2].Step != 9 {
		t.Fatalf("budget %v, want rungs 1 (27 trials), 3 and 9", budget)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	reached := make([]float64, len(budget))
	ran := 0.0
	for round := range rounds {
		rule, _ := New(c, nil)
		alive := make([]string, n)
		for i := range alive {
			alive[i] = fmt.Sprint(round, "-", i)
		}
		for k, r := range budget {
			reached[k] += float64(len(alive))
			rng.Shuffle(len(alive), func(i, j int) { alive[i], alive[j] = alive[j], alive[i] })
			var next []string
			for _, trial := range alive {
				if d, _ := rule.Observe(trial, r.Step, rng.Float64()); d.Stop {
					ran += float64(r.Step)
				} else {
					next = append(next, trial)
				}
			}
			alive = next
		}
		ran += float64(len(alive) * steps)
	}
	for k, r := range budget {
		if got := reached[k] / rounds; math.Abs(got-r.Trials) > 0.05*got {
			t.Errorf("rung %d: %.2f trials reached it in %d rounds; Budget says %.2f", r.Step, got, rounds, r.Trials)
		}
	}
	if got, want := ran/rounds, c.ExpectedSteps(n, steps); math.Abs(got-want) > 0.05*got {
		t.Errorf("%.1f steps run in all; ExpectedSteps says %.1f", got, want)
	}
	if got := (Config{Grace: 1, Reduction: 3}).Budget(27, 3); len(got) != 1 {
		t.Errorf("trials of 3 steps: rungs %v, want only step 1", got)
	}
	if got := (Config{Grace: 5, Reduction: 3}).ExpectedSteps(4, 3); got != 12 {
		t.Errorf("no rung before the end: %g steps, want 12", got)
	}
}

// obs is one value fed to a rule, and whether it must stop the trial.
type obs struct {
	trial string
	step  int
	value float64
	stop  bool
}

func TestRules(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		obs  []obs
		why  string // a stop's reason says this
	}{
		{name: "asha max: first at a rung continues, worse than the top third stops",
			c: Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3},
			obs: []obs{{"a", 1, 0.5, false}, {"b", 1, 0.9, false}, {"c", 1, 0.4, true}, {"d", 1, 0.95, false},
				{"a", 2, 0.1, false}, // no rung at 2
				{"a", 3, 0.6, false}, {"d", 3, 0.5, true}},
			why: "not in the top 1/3"},
		{name: "asha: below reduction values only the best so far continues, then the best n/reduction",
			c: Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3},
			obs: []obs{{"a", 1, 0.5, false}, {"b", 1, 0.4, true}, {"c", 1, 0.5, false}, // a tie continues
				{"d", 1, 0.1, true}, {"e", 1, 0.1, true},
				{"f", 1, 0.45, true}, // 6 values: the best 2 (0.5, 0.5) continue
				{"g", 1, 0.6, false}},
			why: "continue: 0.5 and better"},
		{name: "asha min",
			c:   Config{Method: ASHA, Metric: "loss", Mode: "min", Grace: 2, Reduction: 2},
			obs: []obs{{"a", 1, 9, false}, {"a", 2, 1.0, false}, {"b", 2, 2.0, true}, {"c", 2, 0.5, false}, {"d", 2, 0.9, false}},
		},
		{name: "asha: the same step drawn again is not a second decision",
			c:   Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 2},
			obs: []obs{{"a", 1, 0.9, false}, {"b", 1, 0.1, true}, {"b", 1, 0.1, false}},
		},
		{name: "asha: max bounds the rungs",
			c:   Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 2, Max: 2},
			obs: []obs{{"a", 2, 0.9, false}, {"b", 2, 0.1, false}},
		},
		{name: "median: waits for min-trials, then compares best with the others' running averages",
			c: Config{Method: Median, Metric: "acc", Mode: "max", Grace: 2, MinTrials: 2},
			obs: []obs{{"a", 1, 0.5, false}, {"a", 2, 0.7, false}, {"b", 1, 0.1, false}, {"b", 2, 0.2, false},
				{"c", 1, 0.9, false}, {"c", 2, 0.95, false}, // a's average 0.6, b's 0.15: median 0.375, c best 0.95
				{"d", 1, 0.3, false}, {"d", 2, 0.35, true}}, // a 0.6, b 0.15, c 0.925: median 0.6 > 0.35
			why: "worse than the median 0.6 of 3 other trials' running averages"},
		{name: "median: a new attempt's curve starts again, the old one's values are not its own",
			c: Config{Method: Median, Metric: "acc", Mode: "max", Grace: 1, MinTrials: 1},
			obs: []obs{{"a", 1, 0.5, false}, {"a", 2, 0.5, false},
				{"b", 1, 0.9, false}, {"b", 2, 0.9, false}, // b's first attempt: best 0.9
				{"b", 1, 0.1, true}}, // its retry: best 0.1, below a's 0.5
			why: "best acc 0.1 by step 1 is worse than the median 0.5 of 1 other"},
		{name: "median min, grace",
			c:   Config{Method: Median, Metric: "loss", Mode: "min", Grace: 3, MinTrials: 1},
			obs: []obs{{"a", 1, 1, false}, {"a", 2, 1, false}, {"a", 3, 1, false}, {"b", 1, 5, false}, {"b", 2, 5, false}, {"b", 3, 5, true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(tc.c, nil)
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
				if d.Stop && !strings.Contains(d.Reason, tc.why) {
					t.Errorf("#%d: reason %q, want %q", i, d.Reason, tc.why)
				}
			}
		})
	}
}

// TestASHAShared: two rules over one store (two runalls of one sweep) decide by each other's
// values.
func TestASHAShared(t *testing.T) {
	st := &MemoryStore{}
	c := Config{Method: ASHA, Metric: "acc", Mode: "max", Grace: 1, Reduction: 3}
	one, _ := New(c, st)
	two, _ := New(c, st)
	for i, v := range []float64{0.7, 0.8, 0.9} {
		if d, _ := one.Observe(fmt.Sprint("one-", i), 1, v); d.Stop {
			t.Fatalf("one-%d stopped: %s", i, d.Reason)
		}
	}
	if d, _ := two.Observe("two-0", 1, 0.5); !d.Stop {
		t.Error("two-0 continued below the three values another runall recorded")
	}
}

// TestMedianShared: two median rules over one store (two runalls of one sweep) compare with
// each other's running averages, also those of a runall that is gone.
func TestMedianShared(t *testing.T) {
	st := &MemoryStore{}
	c := Config{Method: Median, Metric: "acc", Mode: "max", Grace: 2, MinTrials: 2}
	one, _ := New(c, st)
	for i, curve := range [][]float64{{0.6, 0.8}, {0.7, 0.9}} {
		for step, v := range curve {
			if d, _ := one.Observe(fmt.Sprint("one-", i), step+1, v); d.Stop {
				t.Fatalf("one-%d stopped: %s", i, d.Reason)
			}
		}
	}
	if got, _ := st.Rung(1); len(got) != 0 {
		t.Errorf("values recorded before grace: %v", got)
	}
	if got, _ := st.Rung(2); len(got) != 2 || got["one-0"] != 0.7 || got["one-1"] != 0.8 {
		t.Errorf("running averages at step 2: %v, want one-0 0.7, one-1 0.8", got)
	}
	two, _ := New(c, st) // a runall that never saw one's trials
	if d, _ := two.Observe("two-0", 1, 0.7); d.Stop {
		t.Errorf("two-0 stopped before grace: %s", d.Reason)
	}
	d, _ := two.Observe("two-0", 2, 0.72)
	if !d.Stop || !strings.Contains(d.Reason, "worse than the median 0.75 of 2 other trials' running averages") {
		t.Errorf("two-0 at step 2 (best 0.72, the others' averages 0.7 and 0.8): %+v", d)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Config{Method: "hyperband", Mode: "max"}, nil); err == nil || !strings.Contains(err.Error(), "want asha or median") {
		t.Errorf("method: %v", err)
	}
	if _, err := New(Config{Method: ASHA}, nil); err == nil || !strings.Contains(err.Error(), "want max or min") {
		t.Errorf("mode: %v", err)
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		vals []float64
		q    float64
		want float64
	}{
		{[]float64{1}, 0.5, 1}, {[]float64{3, 1, 2}, 0.5, 2}, {[]float64{1, 2, 3, 4}, 0.5, 2.5}, {[]float64{0, 10}, 0.25, 2.5},
	} {
		if got := percentile(tc.vals, tc.q); got != tc.want {
			t.Errorf("percentile(%v, %g) = %g, want %g", tc.vals, tc.q, got, tc.want)
		}
	}
}

// countingStore counts a rule's reads and writes.
type countingStore struct {
	MemoryStore
	reads, writes int
}

func (c *countingStore) Rung(step int) (map[string]float64, error) {
	c.reads++
	return c.MemoryStore.Rung(step)
}

func (c *countingStore) Put(step int, trial string, v float64) error {
	c.writes++
	return c.MemoryStore.Put(step, trial, v)
}

// TestStoreRequests: what docs/taskfile.md says each value costs a shared store: median reads
// a step's values and writes its own once per value from grace on, asha once per rung.
func TestStoreRequests(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want int // reads and writes each, for steps 1 to 9 of one trial
	}{
		{Config{Method: Median, Mode: "max", Grace: 3}, 7},
		{Config{Method: ASHA, Mode: "max", Grace: 1, Reduction: 3}, 3}, // rungs 1, 3, 9
	} {
		st := &countingStore{}
		rule, _ := New(tc.c, st)
		for step := 1; step <= 9; step++ {
			if _, err := rule.Observe("a", step, float64(step)); err != nil {
				t.Fatal(err)
			}
		}
		if st.reads != tc.want || st.writes != tc.want {
			t.Errorf("%s: %d reads, %d writes for 9 steps; want %d each", tc.c.Method, st.reads, st.writes, tc.want)
		}
	}
}
