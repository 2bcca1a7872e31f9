package sharing

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Where a trial's rate alone came from.
const (
	FromHistory  = "history"  // an earlier run of the same task measured it
	FromMeasured = "measured" // it was measured alone on its GPU in this run
	FromKind     = "kind"     // the first trial of its kind measured alone, in this run
)

// trial is what the controller knows of one trial.
//
//limits:flat the controller's figures for one trial (its rates alone and shared, its steps), read and written together as a mix is judged
type trial struct {
	Trial
	gpu         string
	alone       float64 // its own rate alone: from history or measured; 0: not known
	aloneFrom   string
	rate        float64 // its latest rate from within its GPU's current mix
	measured    bool    // rate is from within the current mix
	sharedSteps float64 // steps counted over windows it shared its GPU in
	sharedTime  float64 // seconds of those windows
	steps       float64 // steps done, as last told
	util        float64 // its share of its GPU's time within the current mix, as last reported
	hasUtil     bool
	busy        float64 // its busy share alone (busy.go), once known
	hasBusy     bool
	disbelieved bool // a progress of its was said not to be a rate (believe.go)
}

// device is one GPU: its trials and what it learned of their mixes.
type device struct {
	id     string
	trials []*trial      // in the order admitted
	since  time.Duration // when the current mix began
	judged bool          // the current mix was measured and judged
	// step is how the current mix was reached: one trial admitted onto a judged mix
	// (nil: a departure, the first trial, or an admission onto a mix not yet judged).
	step *step
	// gain is the throughput the current mix has against the one before its step, once
	// judged; 0: unknown (no step).
	gain    float64
	tried   map[string]float64 // a mix + the kind added to it → the gain it had, shared by GPUs of one model
	util    float64
	hasUtil bool
	answers bool // its driver reported a trial's share (Busy) at least once
	counts  []Count
}

// step is the admission of one trial onto a judged mix, or of several, one after another
// as their busy shares fit (busy.go), before the mix was measured again.
type step struct {
	from   string  // the mix before (mixOf)
	kind   string  // the kind of the trial added (the first, of several)
	trial  string  // the trial added last
	added  int     // how many were added
	before float64 // the mix's throughput before it
}

func newDevice(id string, tried map[string]float64) *device {
	return &device{id: id, tried: tried}
}

// start adds t; before is the throughput of the mix it joins, when known. Added to a mix
// not yet measured that a step made, t extends that step: the mix is judged against the
// one before the step.
func (d *device) start(now time.Duration, t *trial, before float64, known bool) {
	switch {
	case known && len(d.trials) > 0:
		d.step = &step{from: d.mix(), kind: t.Kind, trial: t.ID, added: 1, before: before}
	case !d.judged && d.step != nil:
		d.step.trial = t.ID
		d.step.added++
	default:
		d.step = nil
	}
	d.trials = append(d.trials, t)
	d.changed(now)
}

// leave removes the trial id, if it is on d.
func (d *device) leave(now time.Duration, id string) {
	i := slices.IndexFunc(d.trials, func(t *trial) bool { return t.ID == id })
	if i < 0 {
		return
	}
	d.trials = slices.Delete(d.trials, i, i+1)
	d.step = nil
	d.changed(now)
}

// changed starts a new mix: no rate from before it counts.
func (d *device) changed(now time.Duration) {
	d.since, d.judged, d.gain = now, false, 0
	for _, t := range d.trials {
		t.measured, t.hasUtil, t.util = false, false, 0
	}
	if n := len(d.counts); n > 0 && d.counts[n-1].At == now.Seconds() {
		d.counts[n-1].Trials = len(d.trials)
	} else {
		d.counts = append(d.counts, Count{At: now.Seconds(), Trials: len(d.trials)})
	}
}

func (d *device) allMeasured() bool {
	for _, t := range d.trials {
		if !t.measured {
			return false
		}
	}
	return len(d.trials) > 0
}

// mix names the kinds of d's trials, with how many of each: the same name for the same
// mix whatever the order they came in.
func (d *device) mix() string { return mixOf(d.trials) }

func mixOf(ts []*trial) string {
	n := map[string]int{}
	for _, t := range ts {
		n[t.Kind]++
	}
	kinds := make([]string, 0, len(n))
	for k := range n {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s×%d", k, n[k])
	}
	return strings.Join(parts, ",")
}

// triedKey names the step of adding a trial of kind to mix.
func triedKey(mix, kind string) string { return mix + " + " + kind }
