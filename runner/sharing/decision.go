package sharing

import (
	"fmt"
	"strings"
	"time"
)

// Action is what a decision does.
type Action int

const (
	// Admit: the GPU takes the trial MayAdmit was asked about.
	Admit Action = iota
	// Wait: the GPU takes no more for now; Why says until what.
	Wait
	// Alone: a trial was measured alone on its GPU: its rate alone.
	Alone
	// Open: the last trial admitted raised the GPU's throughput by more than the margin:
	// the GPU takes one more.
	Open
	// Keep: the last trial admitted raised the throughput by no more than the margin: the
	// GPU keeps its trials and takes no more until its mix changes.
	Keep
	// Lower: the last trial admitted lowered the throughput: the GPU takes one trial fewer,
	// by pausing that trial at its next copy when Pause is set.
	Lower
	// Ignore: a trial's progress is not a rate (believe.go): it judges nothing. Said once
	// per trial.
	Ignore
)

var actionNames = [...]string{"admit", "wait", "alone", "open", "keep", "lower", "ignore"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// Decision is one decision with the figures it was made by.
type Decision struct {
	At     time.Duration
	GPU    string
	Action Action
	// Trial is the trial it concerns: Admit and Wait, the one asked about; Alone, the one
	// measured; Open, Keep and Lower, the one admitted last.
	Trial string
	Pause bool // Lower: pause Trial at its next checkpoint copy
	// Trials is the number of trials on the GPU when it was made.
	Trials int
	// Before and After are the GPU's throughput (the sum of its trials' rates shared over
	// their rates alone) before the last admission and now; 0: not known.
	Before, After float64
	Rates         []TrialRate // the GPU's trials, in the order admitted
	Why           string
}

// TrialRate is one trial's figures in a decision.
type TrialRate struct {
	Trial  string
	Alone  float64 // steps per second alone (its own, else its kind's); 0: not known
	Shared float64 // steps per second now, beside the GPU's other trials
}

// Slowdown is how many times slower the trial runs shared than alone; 0: not known.
func (r TrialRate) Slowdown() float64 {
	if r.Alone <= 0 || r.Shared <= 0 {
		return 0
	}
	return r.Alone / r.Shared
}

// String is the decision as the output says it.
func (d Decision) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gpu %s: %s", d.GPU, d.Why)
	if d.Action == Admit || d.Action == Wait || d.Action == Ignore {
		return b.String()
	}
	var parts []string
	for _, r := range d.Rates {
		s := fmt.Sprintf("%s %.3g/s", r.Trial, r.Shared)
		if sd := r.Slowdown(); sd > 0 && d.Trials > 1 {
			s += fmt.Sprintf(" (alone %.3g/s, %.2fx slower)", r.Alone, sd)
		}
		parts = append(parts, s)
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(parts, "; "))
	}
	return b.String()
}

// judge decides on d's mix, now that every trial on it has a rate from within it.
func (c *Controller) judge(now time.Duration, d *device) Decision {
	d.judged = true
	dec := Decision{At: now, GPU: d.id, Trials: len(d.trials), Rates: c.alone.rates(d)}
	after, known := c.alone.throughput(d)
	dec.After = after
	switch {
	case len(d.trials) == 1:
		t := d.trials[0]
		dec.Action, dec.Trial = Alone, t.ID
		dec.Why = fmt.Sprintf("%s alone runs %.3g steps/s", t.ID, t.rate)
	case d.step == nil || !known:
		dec.Action = Keep
		dec.Why = fmt.Sprintf("%d trials measured at %.2f trials' worth", len(d.trials), after)
		if !known {
			dec.Why = fmt.Sprintf("%d trials measured; a rate alone is not known, so they take no more", len(d.trials))
		}
	default:
		judgeStep(d, &dec, c.opts.Margin)
	}
	return dec
}

// judgeStep judges the admission that made d's mix: its gain against the mix before.
func judgeStep(d *device, dec *Decision, margin float64) {
	s := d.step
	gain := dec.After / s.before
	d.gain = gain
	joined := s.trial
	if s.added == 1 {
		d.tried[triedKey(s.from, s.kind)] = gain
	} else {
		joined = fmt.Sprintf("%d trials up to %s", s.added, s.trial)
	}
	dec.Trial, dec.Before = s.trial, s.before
	figures := fmt.Sprintf("%d trials ran %.2f trials' worth against %.2f before %s joined (%.2fx)",
		len(d.trials), dec.After, s.before, joined, gain)
	switch {
	case gain < 1:
		dec.Action = Lower
		for _, t := range d.trials {
			if t.ID == s.trial {
				dec.Pause = t.CanPause
			}
		}
		if dec.Pause {
			dec.Why = figures + ": one fewer; pausing " + s.trial + " at its next copy"
		} else {
			dec.Why = figures + ": one fewer; " + s.trial + " has no checkpoint: it runs on, and the GPU takes no more until its mix changes"
		}
	case gain <= 1+margin:
		dec.Action = Keep
		dec.Why = fmt.Sprintf("%s: within the %.0f%% margin: no more until its mix changes", figures, 100*margin)
	default:
		dec.Action = Open
		dec.Why = figures + ": one more"
	}
}

// MayAdmit says whether gpu, which has the memory for t, takes it now. It changes nothing:
// the caller calls Started if it places t.
func (c *Controller) MayAdmit(now time.Duration, gpu string, t Trial) Decision {
	c.tick(now)
	d := c.device(gpu)
	dec := Decision{At: now, GPU: gpu, Action: Wait, Trial: t.ID, Trials: len(d.trials), Rates: c.alone.rates(d)}
	dec.After, _ = c.alone.throughputKnown(d)
	alone := t.Alone
	if tr, ok := c.trials[t.ID]; ok && tr.alone > 0 {
		alone = tr.alone
	}
	if alone <= 0 {
		alone = c.alone.kind(t.Kind)
	}
	tried, wasTried := d.tried[triedKey(d.mix(), t.Kind)]
	cand := c.candidate(t)
	full := c.alone.byBusy(d, cand, dec, c.opts) // its trials fill its time, or would with t
	switch {
	case len(d.trials) == 0:
		dec.Action, dec.Why = Admit, t.ID+" starts on an empty GPU"
	case wasTried && tried < 1:
		dec.Why = fmt.Sprintf("one of %s's kind lowered this mix's throughput before (%.2fx)", t.ID, tried)
	case full != nil:
		return *full
	case c.alone.awaitsShares(d, now, c.opts):
		dec.Why = "waiting for the driver's report of its trials' busy shares"
	case wasTried && tried > 1+c.opts.Margin:
		// Known to gain: no need to measure the mix again first (a trial left, say).
		dec.Action, dec.Why = Admit, fmt.Sprintf("%s: one of its kind raised this mix's throughput before (%.2fx)", t.ID, tried)
	case !d.judged && (alone > 0 || c.alone.idle(d, cand)) && c.alone.fitsNow(d, cand, c.opts):
		dec.Action, dec.Why = Admit, fmt.Sprintf("%s: the busy shares, its with its trials', fit in the GPU's time", t.ID)
	case !d.judged:
		dec.Why = fmt.Sprintf("measuring its %d trials since their mix changed", len(d.trials))
	case alone <= 0:
		dec.Why = t.ID + "'s rate alone is not known yet: it waits to be measured alone"
	case dec.After <= 0:
		dec.Why = "a rate alone of its trials is not known: it takes no more"
	case wasTried:
		dec.Action, dec.Why = Admit, fmt.Sprintf("%s: one of its kind did not slow this mix before (%.2fx)", t.ID, tried)
	case d.hasUtil && d.util >= c.opts.Saturated:
		dec.Why = fmt.Sprintf("busy %.0f%% of the time: one more would only take turns", 100*d.util)
	case d.gain > 0 && d.gain < 1:
		dec.Why = fmt.Sprintf("the last trial admitted lowered its throughput (%.2fx): no more until its mix changes", d.gain)
	case d.gain > 0 && d.gain <= 1+c.opts.Margin:
		dec.Why = fmt.Sprintf("the last trial admitted changed its throughput %.2fx, within the %.0f%% margin", d.gain, 100*c.opts.Margin)
	case d.gain > 0:
		dec.Action, dec.Why = Admit, fmt.Sprintf("%s: the last trial admitted raised its throughput %.2fx", t.ID, d.gain)
	default:
		dec.Action, dec.Why = Admit, fmt.Sprintf("%s: trying one more with %d trials at %.2f trials' worth", t.ID, len(d.trials), dec.After)
	}
	return dec
}
