package sharing

import (
	"slices"
	"time"
)

// Defaults of Options.
const (
	DefaultMargin    = 0.05 // the last trial must have raised throughput by more than 5%
	DefaultSaturated = 0.95 // a GPU busy 95% of the time takes no untried trial
)

// Options tune the controller. The zero value takes the defaults.
type Options struct {
	// Margin is how much the last trial admitted to a GPU must have raised its throughput
	// for one more to be admitted there: 0.05 is 5%. 0: DefaultMargin.
	Margin float64
	// MinWindow is the shortest window a rate counts over: a rate measured over less, or
	// from before the GPU's mix last changed, is kept for the figures but judges nothing.
	MinWindow time.Duration
	// Saturated is the device utilisation (0 to 1, as NVML reports it) at and above which a
	// GPU takes no trial that was never tried with its mix: one more would only take turns.
	// 0: DefaultSaturated; above 1: utilisation is not used.
	Saturated float64
	// Overlap is whether the GPUs run their trials' kernels at once (MPS: gpu-isolation
	// mps or auto with MPS had). Busy shares then still let trials whose shares fit join
	// before their mix is measured, but shares that add up to more than the GPU's time keep
	// no trial out: kernels that fill part of the SMs run side by side instead of taking
	// turns, and the rates judge the mix (busy.go).
	Overlap bool
}

// Trial is what the controller is told of a trial as it starts on a GPU.
type Trial struct {
	ID       string  // its name, as the output shows it; unique in the run
	Kind     string  // trials of one kind (a block's sweep) share a rate alone until theirs is known
	Alone    float64 // its rate alone from earlier runs, in steps per second; 0: not known
	CanPause bool    // it has checkpoint: and can be paused at its next copy
}

// Rate is a trial's progress measured over a window that ends now. The window should lie
// between progress updates (the progress reader's), not reach back to the process's start,
// whose set-up would count as a slow rate.
type Rate struct {
	Trial     string
	PerSecond float64       // steps per second over the window
	Since     time.Duration // the window's start, on the controller's clock
	Steps     float64       // steps done so far (for the summary's figures)
	From      float64       // steps done at Since
	Total     float64       // the steps its output says it will take; 0: not said
}

// Controller decides how many trials share each GPU from their measured rates. Its clock
// is the caller's: every method is told the time, as a duration since the run began.
// It is not safe for concurrent use: the caller holds it under its own lock.
type Controller struct {
	opts   Options
	gpus   map[string]*device
	trials map[string]*trial
	order  []string // trial IDs in the order first started, for the figures
	alone  alones   // the rates alone the controller reckons with
	// tried is what adding a kind to a mix did, by GPU model: GPUs of one model learn
	// together (Model; "" until told).
	tried map[string]map[string]float64
	log   []Decision
	end   time.Duration // the latest time any method was told
}

// New is a controller with no GPUs and no trials yet.
func New(o Options) *Controller {
	if o.Margin <= 0 {
		o.Margin = DefaultMargin
	}
	if o.Saturated <= 0 {
		o.Saturated = DefaultSaturated
	}
	return &Controller{opts: o, gpus: map[string]*device{}, trials: map[string]*trial{}, alone: alones{kinds: map[string]float64{}, busy: map[string]float64{}, mixed: map[string]bool{}},
		tried: map[string]map[string]float64{}}
}

func (c *Controller) device(id string) *device {
	d, ok := c.gpus[id]
	if !ok {
		d = newDevice(id, c.book(""))
		c.gpus[id] = d
	}
	return d
}

// book is what GPUs of model learned of adding kinds to mixes.
func (c *Controller) book(model string) map[string]float64 {
	b, ok := c.tried[model]
	if !ok {
		b = map[string]float64{}
		c.tried[model] = b
	}
	return b
}

// Model names gpu's model (NVML's name). GPUs of one model share what each learned of
// adding a kind of trial to a mix, so that a drop on one is not probed again on another;
// GPUs never named share one book, as the GPUs of one machine are usually alike. Name a
// GPU before it takes trials: what it learned before is kept under its old model.
func (c *Controller) Model(gpu, model string) {
	c.device(gpu).tried = c.book(model)
}

func (c *Controller) tick(now time.Duration) { c.end = max(c.end, now) }

// Started records that t began (or resumed) on gpu at now.
func (c *Controller) Started(now time.Duration, gpu string, t Trial) {
	c.tick(now)
	tr, ok := c.trials[t.ID]
	if !ok {
		tr = &trial{Trial: t}
		if t.Alone > 0 {
			tr.alone, tr.aloneFrom = t.Alone, FromHistory
		}
		c.trials[t.ID] = tr
		c.order = append(c.order, t.ID)
	}
	tr.gpu = gpu
	d := c.device(gpu)
	if slices.Contains(d.trials, tr) {
		return // told twice
	}
	before, known := c.alone.throughputKnown(d)
	d.start(now, tr, before, known)
}

// Left records that the trial id left gpu at now: it ended, paused or was requeued.
func (c *Controller) Left(now time.Duration, gpu, id string) {
	c.tick(now)
	if d, ok := c.gpus[gpu]; ok {
		d.leave(now, id)
	}
}

// Utilisation records gpu's device utilisation (0 to 1) as last reported.
func (c *Controller) Utilisation(now time.Duration, gpu string, busy float64) {
	c.tick(now)
	d := c.device(gpu)
	d.util, d.hasUtil = busy, true
}

// Measured records a trial's rate on gpu and returns what it decided: nothing until every
// trial on the GPU has a rate from within its current mix, then one decision for the mix.
// A rate that cannot be true (believe.go) judges nothing and is said once (Ignore).
func (c *Controller) Measured(now time.Duration, gpu string, r Rate) []Decision {
	c.tick(now)
	d, ok := c.gpus[gpu]
	tr := c.trials[r.Trial]
	if !ok || tr == nil || !slices.Contains(d.trials, tr) {
		return nil
	}
	if why := c.alone.unbelievable(tr, r); why != "" {
		if dec := disbelieve(now, gpu, tr, why); dec != nil {
			c.log = append(c.log, *dec)
			return []Decision{*dec}
		}
		return nil
	}
	tr.steps = max(tr.steps, r.Steps)
	window := now - r.Since
	// No progress in a window (a trial still starting, or reading its data) says nothing
	// of how fast it trains: only a rate above 0 judges.
	if r.Since < d.since || window < c.opts.MinWindow || window <= 0 || !(r.PerSecond > 0) {
		return nil
	}
	tr.rate, tr.measured = r.PerSecond, true
	c.alone.noteBusy(d, tr)
	if len(d.trials) > 1 {
		tr.sharedSteps += r.PerSecond * window.Seconds()
		tr.sharedTime += window.Seconds()
		c.alone.sharedRate(tr, r.PerSecond)
	} else {
		c.alone.measured(tr, r.PerSecond)
	}
	if d.judged || !d.allMeasured() {
		return nil
	}
	dec := c.judge(now, d)
	c.log = append(c.log, dec)
	return []Decision{dec}
}

// alones are the rates alone of kinds, each kind's from its first trial measured alone,
// and their busy shares alone, each kind's as last learned (busy.go). A kind is mixed once
// its trials were seen to differ in speed (KindSpread): its rate alone then stands for none
// of them.
type alones struct {
	kinds, busy map[string]float64
	mixed       map[string]bool
}

// measured keeps a rate measured with the trial alone on its GPU: its own rate alone from
// now on, and its kind's when it is the first of its kind.
func (a alones) measured(tr *trial, rate float64) {
	if rate <= 0 {
		return
	}
	tr.alone, tr.aloneFrom = rate, FromMeasured
	k, ok := a.kinds[tr.Kind]
	switch {
	case !ok:
		a.kinds[tr.Kind] = rate
	case rate > k*KindSpread || rate*KindSpread < k:
		a.mixed[tr.Kind] = true
	}
}

// sharedRate notes a trial's rate beside others: one with no rate alone of its own that
// runs faster than its kind alone does is not of its kind's speed, and neither are the rest.
func (a alones) sharedRate(tr *trial, rate float64) {
	if k := a.kinds[tr.Kind]; tr.alone <= 0 && k > 0 && rate > k*KindSpread {
		a.mixed[tr.Kind] = true
	}
}

// kind is kind's rate alone; 0 where none is known or its trials differ in speed.
func (a alones) kind(kind string) float64 {
	if a.mixed[kind] {
		return 0
	}
	return a.kinds[kind]
}

// of is the rate alone the controller reckons t with: its own, else its kind's.
func (a alones) of(t *trial) float64 {
	if t.alone > 0 {
		return t.alone
	}
	return a.kind(t.Kind)
}

// throughputKnown is d's throughput in trials alone, once its mix is judged, and whether
// every trial's rate alone and rate within the mix are known.
func (a alones) throughputKnown(d *device) (float64, bool) {
	if !d.judged {
		return 0, false
	}
	return a.throughput(d)
}

// throughput is the sum of d's trials' rates over their rates alone.
func (a alones) throughput(d *device) (float64, bool) {
	sum := 0.0
	for _, t := range d.trials {
		r := a.of(t)
		if r <= 0 || !t.measured {
			return 0, false
		}
		sum += t.rate / r
	}
	return sum, true
}

// rates are d's trials' figures, in the order admitted.
func (a alones) rates(d *device) []TrialRate {
	out := make([]TrialRate, len(d.trials))
	for i, t := range d.trials {
		out[i] = TrialRate{Trial: t.ID, Alone: a.of(t), Shared: t.rate}
	}
	return out
}

// Decisions are the decisions Measured made so far, in order.
func (c *Controller) Decisions() []Decision { return slices.Clone(c.log) }
