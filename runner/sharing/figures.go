package sharing

import (
	"fmt"
	"sort"
	"time"
)

// Figures are what the controller measured, for results.json and the summary.
type Figures struct {
	Trials []TrialFigures `json:"trials"`
	GPUs   []GPUFigures   `json:"gpus"`
}

// TrialFigures are one trial's rates: alone, shared, and how much slower shared was.
type TrialFigures struct {
	Trial     string  `json:"trial"`
	Alone     float64 `json:"rate_alone,omitempty"` // steps/s; 0: not known
	AloneFrom string  `json:"rate_alone_from,omitempty"`
	// Shared is its mean rate over the windows it shared its GPU in; 0: it never did.
	Shared   float64 `json:"rate_shared,omitempty"`
	Slowdown float64 `json:"slowdown,omitempty"` // Alone / Shared; 0: not known
	Steps    float64 `json:"steps"`
	// Busy is its busy share alone (0 to 1), from its GPU's per-process utilisation
	// (busy.go); absent where the GPU reports none.
	Busy *float64 `json:"busy_share,omitempty"`
}

// GPUFigures are one GPU's number of trials over time.
type GPUFigures struct {
	GPU    string  `json:"gpu"`
	Counts []Count `json:"trials_over_time"`
}

// Count is a GPU's number of trials from At (seconds since the run began) on.
type Count struct {
	At     float64 `json:"at"`
	Trials int     `json:"trials"`
}

// Figures are the figures so far, trials in the order they first started, GPUs by name.
func (c *Controller) Figures() Figures {
	var f Figures
	for _, id := range c.order {
		t := c.trials[id]
		tf := TrialFigures{Trial: id, Alone: c.alone.of(t), AloneFrom: t.aloneFrom, Steps: t.steps}
		if t.alone <= 0 && tf.Alone > 0 {
			tf.AloneFrom = FromKind
		}
		if t.sharedTime > 0 {
			tf.Shared = t.sharedSteps / t.sharedTime
		}
		if tf.Alone > 0 && tf.Shared > 0 {
			tf.Slowdown = tf.Alone / tf.Shared
		}
		if t.hasBusy {
			tf.Busy = &t.busy
		}
		f.Trials = append(f.Trials, tf)
	}
	ids := make([]string, 0, len(c.gpus))
	for id := range c.gpus {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if d := c.gpus[id]; len(d.counts) > 0 {
			f.GPUs = append(f.GPUs, GPUFigures{GPU: id, Counts: append([]Count(nil), d.counts...)})
		}
	}
	return f
}

// Speedup is how many times faster the sweep ran than one trial at a time on each GPU would
// have, from measured rates alone: the time each trial would have taken alone (its steps
// over its rate alone), summed, over the time the GPUs had trials, summed up to end
// (seconds since the run began). false when a trial that made progress has no rate alone,
// or the GPUs were never busy.
func (f Figures) Speedup(end time.Duration) (float64, bool) {
	alone := 0.0
	for _, t := range f.Trials {
		if t.Steps <= 0 {
			continue
		}
		if t.Alone <= 0 {
			return 0, false
		}
		alone += t.Steps / t.Alone
	}
	busy := 0.0
	for _, g := range f.GPUs {
		for i, c := range g.Counts {
			next := end.Seconds()
			if i+1 < len(g.Counts) {
				next = g.Counts[i+1].At
			}
			if c.Trials > 0 && next > c.At {
				busy += next - c.At
			}
		}
	}
	if busy <= 0 || alone <= 0 {
		return 0, false
	}
	return alone / busy, true
}

// Summary is the summary's line of what sharing bought, up to end; "" when it is not known.
// A sweep whose trials never shared a GPU ran one at a time, and says so: the rates'
// differences between windows are noise, not a speedup.
func (f Figures) Summary(end time.Duration) string {
	if most := f.mostAtOnce(); most == 1 {
		return "its trials never shared a GPU: sharing ran this sweep one trial at a time"
	}
	s, ok := f.Speedup(end)
	switch {
	case ok:
		return summaryOf(s)
	case f.idle():
		// Beside shares of 0 the trials joined before one ran alone long enough to be
		// measured (busy.go): no rate alone says what sharing bought, but the shares say
		// they took no turns on the GPU.
		return fmt.Sprintf("its trials' processes ran no kernel (busy shares of 0): sharing ran up to %d at once on a GPU, as packing by memory would; no rate alone was measured to say how much faster", f.mostAtOnce())
	}
	return ""
}

// idle is whether every trial that made progress has a busy share alone of 0.
func (f Figures) idle() bool {
	n := 0
	for _, t := range f.Trials {
		if t.Steps <= 0 {
			continue
		}
		if t.Busy == nil || *t.Busy != 0 {
			return false
		}
		n++
	}
	return n > 0
}

// summaryOf says a speedup s (the time one at a time over the time shared).
func summaryOf(s float64) string {
	switch {
	case fmt.Sprintf("%.1f", s) == "1.0" || fmt.Sprintf("%.1f", 1/s) == "1.0":
		// Within what one decimal shows: "1.0x slower" would say a change it did not measure.
		return fmt.Sprintf("sharing ran this sweep as fast as one trial at a time would have (measured rates: %.2fx)", s)
	case s >= 1:
		return fmt.Sprintf("sharing ran this sweep %.1fx faster than one trial at a time would have (measured rates)", s)
	default:
		return fmt.Sprintf("sharing ran this sweep %.1fx slower than one trial at a time would have (measured rates)", 1/s)
	}
}

// End is the latest time the controller was told of, for Speedup and Summary.
func (c *Controller) End() time.Duration { return c.end }

// mostAtOnce is the most trials any GPU had at once.
func (f Figures) mostAtOnce() int {
	most := 0
	for _, g := range f.GPUs {
		for _, c := range g.Counts {
			most = max(most, c.Trials)
		}
	}
	return most
}
