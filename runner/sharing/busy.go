package sharing

import (
	"fmt"
	"slices"
	"time"
)

// Placing by busy shares. Where the GPU reports each process's utilisation (NVML's
// nvmlDeviceGetProcessUtilization, or the simulated GPUs'), the controller learns each
// trial's busy share: the part of its time alone that its kernels keep the GPU computing.
// Without MPS a GPU runs one process's kernels at a time, so the busy shares of the trials
// on it say how much of its time they fill: a GPU whose trials fill it computes all it can,
// and one more there only takes turns with them (and pays for the switching), while a trial
// that fits in what is left runs in the others' gaps. So a GPU whose trials fill its time
// takes no more, and one takes a trial only while the busy shares, the trial's with them,
// fit in its time (within Options.Margin): a light trial beside a heavy one waits for a GPU
// with room, two heavy ones are kept apart, and no probe is spent on mixes the shares
// already rule out. Rates stay the judge of gain: a mix that fits is still measured and
// lowered when its throughput fell, and a mix of unknown shares is probed as before. A GPU
// its trials fill takes no more even where one of a kind once raised its mix's throughput:
// that sum counts a light trial's worth as a heavy one's, not the GPU time it would leave
// unused on another GPU, where it fits. Under MPS (Options.Overlap) kernels of different
// trials run at once, filling the SMs they need, so a share is no longer a part of the GPU's
// time that others must wait for: byBusy keeps no trial out there, and fitsNow, whose shares
// fit however they overlap, still lets trials join early.

// DriverSample is how often a driver samples each process's utilisation (NVML's
// nvmlDeviceGetProcessUtilization returns the samples since the time it is given; recent
// GPUs take one about every 1/6 s).
const DriverSample = time.Second / 6

// Busy records the share of gpu's time (0 to 1) the kernels of the trial id ran lately, as
// the GPU reports it per process. A share above 0 from less than MinWindow after the GPU's
// mix changed is not used: the driver's samples still reach back before the change. A
// share of 0 is used from one DriverSample after it: no kernel of the trial's in a window
// that reaches back before the change is none since the change either, and the driver has
// sampled its processes once since.
func (c *Controller) Busy(now time.Duration, gpu, id string, share float64) {
	c.tick(now)
	d, ok := c.gpus[gpu]
	tr := c.trials[id]
	if !ok || tr == nil || !slices.Contains(d.trials, tr) || share < 0 {
		return
	}
	d.answers = true
	wait := c.opts.MinWindow
	if share == 0 {
		wait = min(wait, DriverSample)
	}
	if now-d.since < wait {
		return
	}
	tr.util, tr.hasUtil = min(share, 1), true
	c.alone.noteBusy(d, tr)
}

// noteBusy keeps t's busy share alone, once its rate was measured within its GPU's current
// mix too: its share of the GPU's time when alone; beside others, that share times how much
// slower it runs than alone (a step takes as much of the GPU's time, spread over a longer
// step). A share beside others is not its share alone by itself: switching between
// processes leaves the GPU idle while every step waits longer. A kind's share is its
// trials' measured alone, else the first estimated beside others.
//
// A share of 0 needs no rate (issue 42, point 4): the trial's known processes ran no kernel
// in the driver's window, so it takes no turn on the GPU, alone or beside others, and
// whatever its speed 0 scaled by it is 0. It is its share alone at once, and its kind's
// where the kind has none, so that trials beside it join as packing by memory would have
// them, without waiting for a rate window. A share above 0 still waits for a rate measured
// beside it (it may be a set-up's), and replaces a kind's share of 0: a trial that was
// setting up at 0% then computes is judged as today.
func (a alones) noteBusy(d *device, t *trial) {
	if t.hasUtil && t.util == 0 && !t.measured {
		t.busy, t.hasBusy = 0, true
		if _, ok := a.busy[t.Kind]; !ok {
			a.busy[t.Kind] = 0
		}
		return
	}
	if t.hasUtil && t.util > 0 && !t.measured && t.hasBusy && t.busy == 0 {
		t.hasBusy = false // it computes now: its share of 0 was a set-up's
		if k, ok := a.busy[t.Kind]; ok && k == 0 {
			delete(a.busy, t.Kind)
		}
	}
	if !t.hasUtil || !t.measured {
		return // a share read with no progress measured beside it may be a set-up's
	}
	alone := a.of(t)
	switch {
	case len(d.trials) == 1:
		t.busy, t.hasBusy = t.util, true
		a.busy[t.Kind] = t.busy
	case alone > 0 && t.rate > 0:
		t.busy, t.hasBusy = min(t.util*alone/t.rate, 1), true
		if k, ok := a.busy[t.Kind]; !ok || k == 0 {
			a.busy[t.Kind] = t.busy
		}
	}
}

// idle is whether t and every trial of d have a busy share alone of 0: none takes a turn on
// the GPU, so t joins d as packing by memory would have it, its rate alone known or not.
func (a alones) idle(d *device, t *trial) bool {
	for _, tr := range append([]*trial{t}, d.trials...) {
		if b, ok := a.busyOf(tr); !ok || b > 0 {
			return false
		}
	}
	return true
}

// busyOf is t's busy share alone: its own, else its kind's; ok is false where neither is
// known.
func (a alones) busyOf(t *trial) (float64, bool) {
	if t.hasBusy {
		return t.busy, true
	}
	b, ok := a.busy[t.Kind]
	return b, ok
}

// fill is the share of d's time its trials' busy shares add up to; ok is false where one
// of them is not known.
func (a alones) fill(d *device) (float64, bool) {
	sum := 0.0
	for _, t := range d.trials {
		b, ok := a.busyOf(t)
		if !ok {
			return 0, false
		}
		sum += b
	}
	return sum, true
}

// byBusy is what the busy shares say of admitting t to d: a Wait where d's trials fill its
// time, or would with t; nil where they leave room for t, are not all known, or overlap
// (MPS: o.Overlap).
func (a alones) byBusy(d *device, t *trial, dec Decision, o Options) *Decision {
	if o.Overlap {
		return nil // kernels run at once: shares past the GPU's time are not turns taken
	}
	fill, ok := a.fill(d)
	if !ok {
		return nil
	}
	if fill >= o.Saturated {
		dec.Why = fmt.Sprintf("its trials keep it busy %.0f%% of the time alone: one more would only take turns", 100*fill)
		return &dec
	}
	b, ok := a.busyOf(t)
	if !ok || fill+b <= 1+o.Margin {
		return nil
	}
	dec.Why = fmt.Sprintf("%s's busy share %.2f and its trials' %.2f add up to more than the GPU's time: they would take turns", t.ID, b, fill)
	return &dec
}

// fitsNow is whether t may join d before d's mix is measured: the busy shares, t's with
// d's trials', fit in its time, and the driver reported each of d's trials' share from
// within its current mix, none below its share alone by more than the margin. A trial
// whose share fell computes less each second than alone: it runs slower, whatever slows
// it (the switching between processes, the host's cores), and the mix waits to be judged
// by its rates, against the mix before the trials that joined it so (device.start). A
// trial whose share alone is 0 (its processes ran no kernel) waits for no share: beside
// it the others join at once, as packing by memory would have them.
func (a alones) fitsNow(d *device, t *trial, o Options) bool {
	fill, ok := a.fill(d)
	if !ok {
		return false
	}
	for _, tr := range d.trials {
		// A trial whose share alone is 0 has no share to fall: its kernels take no turn.
		if b, _ := a.busyOf(tr); b > 0 && (!tr.hasUtil || tr.util*(1+o.Margin) < b) {
			return false
		}
	}
	b, ok := a.busyOf(t)
	return ok && fill+b <= 1+o.Margin
}

// candidate is the trial t, asking to start or resume, as the controller knows it.
func (c *Controller) candidate(t Trial) *trial {
	if tr, ok := c.trials[t.ID]; ok {
		return tr
	}
	return &trial{Trial: t}
}

// awaitsShares is whether d, whose driver reports each process's utilisation, waits for the
// share of a trial of its whose share alone is not known yet: a rate measured before the
// driver's next report must not let a trial in beside one that fills the GPU. It waits
// three MinWindows at most from its mix's change: a trial whose processes are never told
// apart gets no share, and the rates decide alone.
func (a alones) awaitsShares(d *device, now time.Duration, o Options) bool {
	if !d.answers || now-d.since >= 3*o.MinWindow {
		return false
	}
	for _, t := range d.trials {
		if _, known := a.busyOf(t); !known && !t.hasUtil {
			return true
		}
	}
	return false
}
