// Package earlystop decides when a trial of a sweep stops early, from the values of one
// metric that every trial reports step by step (one value per epoch). It holds the rules and
// nothing else: it runs no process and knows no task file; whoever watches the trials feeds
// it their values and stops the trials it names.
//
// Two rules, as Ray Tune and Optuna have them (asha deciding as Optuna does):
//
//   - asha: asynchronous successive halving. Rungs stand at grace·reduction^k steps (below
//     max, when set). A trial that reaches a rung continues only if its value there is among
//     the best max(1, n/reduction) of the n values recorded at that rung, its own included:
//     the first trial at a rung continues, and until reduction have reached it only one
//     better than all before it does (as Optuna's successive halving pruner decides).
//   - median: from step grace on, a trial whose best value so far is worse than the median of
//     the other trials' running averages at the same step stops, once at least min-trials
//     others have recorded one there.
//
// Both keep what they compare in a Store, by step: asha the values at its rungs, median each
// trial's running average at the steps it decides at (every step from grace on for 128 steps,
// then ever fewer: a bounded number for any length of training). Runalls that share a Store
// decide with each other's trials.
//
// A step with no usable value (the trial printed nan or inf: it diverged) counts as the worst
// value there can be, so that a diverged trial is the first to stop, not one that runs to its
// end because it has nothing to compare. What a rule keeps per trial is bounded, and each
// value costs it a constant amount of work besides the store's.
package earlystop

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
)

// Methods.
const (
	ASHA     = "asha"
	Median   = "median"
	Forecast = "forecast"
)

// Config is early-stop: in a task file.
type Config struct {
	Method    string // asha or median
	Metric    string // the metric compared ("" until the objective's is filled in)
	Mode      string // max or min
	Grace     int    // steps before the first decision (default 1)
	Reduction int    // asha: the rungs' factor, and the 1/reduction that continue (default 3)
	Max       int    // asha: no rung at or above this many steps; 0: none
	MinTrials int    // median: the others needed at a step before it compares (default 3)
	// forecast: stop a trial whose chance of ending better than the best is below MinChance
	// (default 0.05), fitting the families named (all when none; runner/forecast); with a
	// checkpoint, pause one whose chance is below PauseBelow (default 0.2) instead. Its
	// chance is of ending better than the best by more than MinDelta (default 0).
	MinChance  float64
	PauseBelow float64
	MinDelta   float64
	Families   []string

	Population Population // pbt: how its population evolves (sync_config.go)
}

// Defaults.
const (
	DefaultGrace      = 1
	DefaultReduction  = 3
	DefaultMinTrials  = 3
	DefaultMinChance  = 0.05
	DefaultPauseBelow = 0.2
)

// ForecastFamilies are the curve families method forecast fits (runner/forecast, whose test
// holds it to this list): Domhan et al.'s (IJCAI 2015).
var ForecastFamilies = []string{"pow3", "ilog2", "janoschek", "log_power", "weibull", "mmf", "vap",
	"loglog_linear", "exp4", "pow4", "dr_hill"}

// maxRungs bounds the rungs of an asha without max: reduction^maxRungs steps is past any
// training run.
const maxRungs = 40

// Rungs are the steps at which asha decides, in order.
func (c Config) Rungs() []int {
	var out []int
	r := max(c.Reduction, 2)
	for step := max(c.Grace, 1); len(out) < maxRungs && (c.Max == 0 || step < c.Max); step *= r {
		out = append(out, step)
		if step > math.MaxInt32/r {
			break
		}
	}
	return out
}

// RungBudget is about how many trials reach one rung.
type RungBudget struct {
	Step   int
	Trials float64 // expected
}

// Budget is about how many of n trials asha lets reach each rung, all of them the first:
// the expected count when trials reach a rung in random order, as they do when they train at
// different speeds. Asynchronous, asha lets more than 1/reduction through (the first at a
// rung always continues): 27 trials, reduction 3, give about 9.1, 3.5 and 2.0 at the next
// three rungs, not 9, 3 and 1. steps is the trials' full length (0: unknown), which caps the
// rungs listed.
func (c Config) Budget(n, steps int) []RungBudget {
	var out []RungBudget
	left := float64(n)
	for _, step := range c.Rungs() {
		if steps > 0 && step >= steps {
			break
		}
		out = append(out, RungBudget{step, left})
		left = c.passing(left)
	}
	return out
}

// passing is the expected number of m trials (m may be fractional: itself an expectation)
// that continue at a rung they reach in random order. The j-th to arrive continues if it is
// among the best max(1, j/reduction) of the j values there, which in random order it is
// with probability max(1, j/reduction)/j, independently of the others' ranks.
func (c Config) passing(m float64) float64 {
	r := max(c.Reduction, 2)
	sum := 0.0
	for j := 1; float64(j) <= m+1; j++ {
		p := float64(max(1, j/r)) / float64(j)
		sum += p * min(1, m-float64(j-1)) // the last, fractional arrival counts in part
	}
	return sum
}

// ExpectedSteps is about how many steps n trials of steps steps run in all under asha: a
// trial stopped at a rung ran its step; one past the last rung runs to the end. Without
// early stopping they would run n·steps.
func (c Config) ExpectedSteps(n, steps int) float64 {
	rungs := c.Budget(n, steps)
	if len(rungs) == 0 {
		return float64(n) * float64(steps)
	}
	total := 0.0
	for i, r := range rungs {
		next := c.passing(r.Trials)
		total += (r.Trials - next) * float64(r.Step) // stopped here
		if i == len(rungs)-1 {
			total += next * float64(steps) // past the last rung: to the end
		}
	}
	return total
}

// Store holds what a rule compares, by step: asha's rung values, median's running averages.
// Each runall of a sweep that shares its claims keeps them where all of them see every
// trial's; a single runall keeps them in memory.
type Store interface {
	// Rung returns the values recorded at a step, by trial.
	Rung(step int) (map[string]float64, error)
	// Put records a trial's value at a step (again: the value it has now).
	Put(step int, trial string, v float64) error
}

// MemoryStore is a Store in memory, safe for concurrent use.
type MemoryStore struct {
	mu    sync.Mutex
	rungs map[int]map[string]float64
}

// Rung implements Store.
func (m *MemoryStore) Rung(step int) (map[string]float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]float64{}
	for k, v := range m.rungs[step] {
		out[k] = v
	}
	return out, nil
}

// Put implements Store.
func (m *MemoryStore) Put(step int, trial string, v float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rungs == nil {
		m.rungs = map[int]map[string]float64{}
	}
	if m.rungs[step] == nil {
		m.rungs[step] = map[string]float64{}
	}
	m.rungs[step][trial] = v
	return nil
}

// Decision is what a rule says of a trial after one of its values.
type Decision struct {
	Stop   bool
	Reason string // why it stops, for the summary and the report
	// Forecast is the figures method forecast decided by; nil for the other methods and
	// where forecast did not decide.
	Forecast *ForecastFigures
}

// ForecastFigures are the figures of one decision of method forecast: the trial's value at
// Max forecast at Step, and its chance of ending better than the incumbent.
type ForecastFigures struct {
	Step, At          int     // the step decided at, and the one forecast (Max)
	Median, Low, High float64 // the forecast's median and 90% band at Max
	Chance            float64 // of ending better than Incumbent
	// Incumbent is the value to beat: the best reached at Max (Reached), else the best of
	// the other trials' forecasts (each the end it reaches with 95% chance); none
	// (HasIncumbent false) before any other.
	Incumbent    float64
	HasIncumbent bool
	Reached      bool
	Stop         bool
	// References is how many trials that reached Max the forecast read (runner/forecast's
	// reference model); Informed whether the forecast is more than their prior: a reference's
	// prefix lies near, or the families fitted the curve.
	References int
	Informed   bool
}

// Rule decides, value by value, which trials stop. Safe for concurrent use.
type Rule interface {
	// Observe takes a trial's value of the metric at a step (1 for its first); a NaN or an
	// infinity is a step with no usable value, which counts as the worst value.
	Observe(trial string, step int, value float64) (Decision, error)
}

// worst is a value worse than any a trial can report in mode, and finite, so that a shared
// store can write it as JSON and the median's arithmetic stays finite.
func worst(mode string) float64 {
	if mode == "min" {
		return math.MaxFloat64
	}
	return -math.MaxFloat64
}

// usable reports whether v is a value a trial reported, not a step without one.
func usable(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// shown is a value as a reason quotes it: the worst value is the missing one it stands for.
func shown(v float64) string {
	if v == math.MaxFloat64 || v == -math.MaxFloat64 || !usable(v) {
		return "no usable value (nan)"
	}
	return num(v)
}

// New makes the rule c names, keeping what it compares in st (a MemoryStore when nil).
func New(c Config, st Store) (Rule, error) {
	if c.Mode != "max" && c.Mode != "min" {
		return nil, fmt.Errorf("early-stop: mode %q: want max or min", c.Mode)
	}
	c.Grace = max(c.Grace, 1)
	if st == nil {
		st = &MemoryStore{}
	}
	switch c.Method {
	case ASHA:
		c.Reduction = max(c.Reduction, 2)
		return &asha{c: c, rungs: c.Rungs(), st: st, recorded: map[string]map[int]bool{}}, nil
	case Median:
		return &median{c: c, st: st, curves: map[string]*curve{}}, nil
	}
	return nil, fmt.Errorf("early-stop: method %q: want asha or median", c.Method)
}

// better reports whether a is better than b in mode.
func better(mode string, a, b float64) bool {
	if mode == "min" {
		return a < b
	}
	return a > b
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

type asha struct {
	c     Config
	rungs []int
	st    Store

	mu       sync.Mutex
	recorded map[string]map[int]bool // the rungs each trial has passed, here
}

// firstAt records that trial reached the rung at step, and reports whether it had not
// before (a step drawn again is decided once).
func (a *asha) firstAt(trial string, step int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.recorded[trial][step] {
		return false
	}
	if a.recorded[trial] == nil {
		a.recorded[trial] = map[int]bool{}
	}
	a.recorded[trial][step] = true
	return true
}

func (a *asha) Observe(trial string, step int, v float64) (Decision, error) {
	if !slices.Contains(a.rungs, step) || !a.firstAt(trial, step) {
		return Decision{}, nil
	}
	missing := !usable(v)
	if missing {
		v = worst(a.c.Mode)
	}
	before, err := a.st.Rung(step)
	if err != nil {
		return Decision{}, fmt.Errorf("early-stop: read rung %d: %w", step, err)
	}
	delete(before, trial) // a value of its own from an earlier attempt is no rival
	if err := a.st.Put(step, trial, v); err != nil {
		return Decision{}, fmt.Errorf("early-stop: record rung %d: %w", step, err)
	}
	if missing {
		// asha keeps the first trials at a rung whatever their values, since nothing is there
		// to compare them with; a trial with no value cannot be among the best, so it is
		// stopped even when it arrives first (a diverged run kept its GPU to the end when the
		// shuffled order started it early).
		return Decision{Stop: true, Reason: fmt.Sprintf("asha: %s %s at step %d: a trial without a value at a rung does not continue",
			a.c.Metric, shown(v), step)}, nil
	}
	// Of the n values at the rung, this one included, the best max(1, n/reduction)
	// continue: with fewer than reduction values, only the best so far.
	n := len(before) + 1
	keep := max(1, n/a.c.Reduction)
	vals := []float64{v}
	ahead := 0
	for _, x := range before {
		vals = append(vals, x)
		if better(a.c.Mode, x, v) {
			ahead++
		}
	}
	if ahead < keep {
		return Decision{}, nil
	}
	slices.SortFunc(vals, func(x, y float64) int {
		switch {
		case better(a.c.Mode, x, y):
			return -1
		case better(a.c.Mode, y, x):
			return 1
		}
		return 0
	})
	return Decision{Stop: true, Reason: fmt.Sprintf("asha: %s %s at step %d is not in the top 1/%d of the %d values recorded at that rung (the best %d continue: %s and better)",
		a.c.Metric, shown(v), step, a.c.Reduction, n, keep, shown(vals[keep-1]))}, nil
}

// Pauses reports whether the rule pauses trials and resumes them from their checkpoints
// (successive halving, hyperband, population-based training) rather than stopping them:
// each trial of its block then needs checkpoint:.
func (c Config) Pauses() bool {
	switch c.Method {
	case "sha", "hyperband", "pbt":
		return true
	}
	return false
}
