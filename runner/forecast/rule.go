package forecast

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/runall/runall/runner/earlystop"
)

// forecastStep is where a Store keeps each trial's latest forecast of its value at
// max (the end it reaches with 95% chance, at most its best value so far): step 0, which no
// trial reports (steps count from 1). Its values at max are kept at
// max, as asha keeps a rung's.
const forecastStep = 0

// maxKept bounds the points kept per trial: past it, every other older point is dropped,
// so that a trial of a million steps costs what one of a few thousand does.
const maxKept = 4096

// Rule is early-stop method forecast: at each step it decides at (from grace on: every step
// for 128 steps, then ever fewer, as median), a trial's curve so far is forecast at max (by
// the families' fit and by the trials that reached max: reference.go), and
// the trial stops when its chance of ending better than the incumbent (by more than
// min-delta, when set: the least improvement that counts, as Keras's EarlyStopping has it)
// is below min-chance.
// The incumbent is the best value a trial reached at max or, before any did, the best of
// the other trials' forecasts, each the end it reaches with 95% chance (Domhan et al.
// compare with the best value observed; an unfinished trial's median is no value to beat
// when its band is wide). A trial whose best value so far is already as good as the
// incumbent goes on whatever its forecast. It keeps what the trials share (their values at
// max, their forecasts) in an earlystop.Store, so that every runall of a
// sweep under --claims decides against every trial. Safe for concurrent use.
type Rule struct {
	c  earlystop.Config
	st earlystop.Store

	mu     sync.Mutex
	curves map[string][]Point // what this runall's trials reported
}

// New is the rule of c (method forecast), keeping what it shares in st (a MemoryStore when
// nil).
func New(c earlystop.Config, st earlystop.Store) (*Rule, error) {
	if c.Mode != "max" && c.Mode != "min" {
		return nil, fmt.Errorf("early-stop: mode %q: want max or min", c.Mode)
	}
	if c.Max < 1 {
		return nil, fmt.Errorf("early-stop: forecast needs max, the trials' last step")
	}
	c.Grace = max(c.Grace, 1)
	if c.MinChance <= 0 {
		c.MinChance = earlystop.DefaultMinChance
	}
	if st == nil {
		st = &earlystop.MemoryStore{}
	}
	return &Rule{c: c, st: st, curves: map[string][]Point{}}, nil
}

// add records the trial's value at step: a step drawn again replaces its value, and a step
// at or before one recorded starts the curve again from there (a retried command's new
// attempt counts from 1; a resumed one goes on from its checkpoint's step).
func (r *Rule) add(trial string, step int, v float64) []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	pts := r.curves[trial]
	i := len(pts)
	for i > 0 && pts[i-1].Step >= step {
		i--
	}
	pts = append(pts[:i], Point{step, v})
	if len(pts) > maxKept {
		var thin []Point
		for j, p := range pts[:len(pts)/2] {
			if j%2 == 0 {
				thin = append(thin, p)
			}
		}
		pts = append(thin, pts[len(pts)/2:]...)
	}
	r.curves[trial] = pts
	return slices.Clone(pts)
}

// Observe implements earlystop.Rule.
func (r *Rule) Observe(trial string, step int, v float64) (earlystop.Decision, error) {
	pts := r.add(trial, step, v)
	usable := !math.IsNaN(v) && !math.IsInf(v, 0)
	if step == r.c.Max {
		if !usable {
			v = r.worst()
		}
		if err := r.st.Put(r.c.Max, trial, v); err != nil {
			return earlystop.Decision{}, fmt.Errorf("early-stop: record the value at step %d: %w", step, err)
		}
	}
	if err := r.share(trial, step, v); err != nil {
		return earlystop.Decision{}, err
	}
	if step < r.c.Grace || step >= r.c.Max || !earlystop.DecidesAt(r.c.Grace, step) {
		return earlystop.Decision{}, nil
	}
	if !usable {
		if err := r.withdraw(trial); err != nil {
			return earlystop.Decision{}, err
		}
		return earlystop.Decision{Stop: true, Reason: fmt.Sprintf("forecast: %s has no usable value (nan) at step %d: a trial that diverged does not go on",
			r.c.Metric, step)}, nil
	}
	return r.decide(trial, step, pts)
}

// decide forecasts the trial's curve at max and compares it with the incumbent.
func (r *Rule) decide(trial string, step int, pts []Point) (earlystop.Decision, error) {
	sign := r.sign()
	for i := range pts {
		pts[i].Value *= sign // higher is better from here on
	}
	pred, refs, informed, ok, err := r.forecast(trial, pts)
	if err != nil || !ok {
		return earlystop.Decision{}, err // too few usable points and no reference yet
	}
	fig := &earlystop.ForecastFigures{Step: step, At: r.c.Max, Median: sign * pred.Quantile(0.5), References: refs, Informed: informed}
	fig.Low, fig.High = sign*pred.Quantile(0.05), sign*pred.Quantile(0.95)
	if sign < 0 {
		fig.Low, fig.High = fig.High, fig.Low
	}
	// What it offers the others as a value to beat is the end it reaches with 95% chance,
	// not its median: a curve still in its early, accelerating phase is forecast to end at
	// 1.48 accuracy (band 0.24 to 2.0), and its median would stop every other trial.
	// Nor above the best value it has shown: the families forecast a slow, accelerating
	// curve at step 5 to end at 1.35 accuracy (its 95% end 1.04), and that stopped every
	// other trial of the crossing curves' benchmark.
	best := slices.MaxFunc(pts, func(a, b Point) int { return cmpUsable(a.Value, b.Value) }).Value
	offer := min(pred.Quantile(0.05), best)
	if err := r.st.Put(forecastStep, trial, sign*offer); err != nil {
		return earlystop.Decision{}, fmt.Errorf("early-stop: record the forecast at step %d: %w", step, err)
	}
	inc, reached, found, err := r.incumbent(trial)
	if err != nil || !found {
		fig.Chance = 1
		return earlystop.Decision{Forecast: fig}, err
	}
	fig.Incumbent, fig.HasIncumbent, fig.Reached = inc, true, reached
	fig.Chance = pred.Above(sign*inc + delta(r.c, reached))
	if best >= sign*inc || fig.Chance >= r.c.MinChance {
		return earlystop.Decision{Forecast: fig}, nil
	}
	fig.Stop = true
	return earlystop.Decision{Stop: true, Forecast: fig, Reason: r.reason(fig)}, r.withdraw(trial)
}

// withdraw takes a trial that stops out of the incumbents: it will not reach max, so its
// forecast is no value to beat.
func (r *Rule) withdraw(trial string) error {
	if err := r.st.Put(forecastStep, trial, r.worst()); err != nil {
		return fmt.Errorf("early-stop: withdraw the forecast of a stopped trial: %w", err)
	}
	return nil
}

// Chance is trial's chance now of ending better than the incumbent, from the curve it
// reported so far: what a paused trial's is once others have moved the incumbent. ok is
// false when its curve cannot be forecast yet or no other trial has a value to beat.
func (r *Rule) Chance(trial string) (chance float64, ok bool) {
	r.mu.Lock()
	pts := slices.Clone(r.curves[trial])
	r.mu.Unlock()
	sign := r.sign()
	for i := range pts {
		pts[i].Value *= sign
	}
	pred, _, _, fitted, err := r.forecast(trial, pts)
	if !fitted || err != nil {
		return 0, false
	}
	inc, reached, found, err := r.incumbent(trial)
	if !found || err != nil {
		return 0, false
	}
	return pred.Above(sign*inc + delta(r.c, reached)), true
}

// Incumbent is the value trial must beat now, in the metric's units; ok is false when no
// other trial has one.
func (r *Rule) Incumbent(trial string) (v float64, ok bool) {
	v, _, ok, err := r.incumbent(trial)
	return v, ok && err == nil
}

// incumbent is the value to beat, in the metric's own units: the best value another trial
// reached at max (reached), else the best of the others' forecasts, each the end it
// reaches with 95% chance (the low end of its band); found is false when no other trial
// has either.
func (r *Rule) incumbent(trial string) (v float64, reached, found bool, err error) {
	for _, at := range []int{r.c.Max, forecastStep} {
		vals, err := r.st.Rung(at)
		if err != nil {
			return 0, false, false, fmt.Errorf("early-stop: read the values at step %d: %w", at, err)
		}
		if at == forecastStep {
			delete(vals, trial) // its own forecast is no rival; its own end would be
		}
		for _, x := range vals {
			if x == r.worst() || math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			if !found || r.sign()*x > r.sign()*v {
				v, found = x, true
			}
		}
		if found {
			return v, at == r.c.Max, true, nil
		}
	}
	return 0, false, false, nil
}

// delta is the least improvement that counts against an incumbent: min-delta against a
// value reached at max; none against another trial's forecast, itself a guess with a margin
// (its 95% end): on top of it, min-delta stopped the grid's best on the curves benchmark.
func delta(c earlystop.Config, reached bool) float64 {
	if !reached {
		return 0
	}
	return c.MinDelta
}

// reason says why a trial stops, with the figures it stopped by.
func (r *Rule) reason(f *earlystop.ForecastFigures) string {
	what := "the best of the other trials' forecasts, each the end it reaches with 95% chance"
	if f.Reached {
		what = "the best value reached at step " + strconv.Itoa(r.c.Max)
	}
	by := ""
	if delta(r.c, f.Reached) > 0 {
		by = " by more than min-delta " + num(r.c.MinDelta)
	}
	return fmt.Sprintf("forecast: %s at step %d is forecast to end at %s (90%% band %s to %s) at step %d; its chance of ending better than %s (%s)%s is %s, below min-chance %s",
		r.c.Metric, f.Step, num(f.Median), num(f.Low), num(f.High), r.c.Max, num(f.Incumbent), what, by, num(f.Chance), num(r.c.MinChance))
}

// sign turns the metric's values into ones where higher is better.
func (r *Rule) sign() float64 {
	if r.c.Mode == "min" {
		return -1
	}
	return 1
}

// worst is the value a trial without a usable one at max is recorded with (earlystop's).
func (r *Rule) worst() float64 { return -r.sign() * math.MaxFloat64 }

// cmpUsable orders values with the unusable ones lowest.
func cmpUsable(a, b float64) int {
	switch {
	case math.IsNaN(a) || math.IsInf(a, 0):
		return -1
	case math.IsNaN(b) || math.IsInf(b, 0):
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
