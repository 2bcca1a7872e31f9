// Measuring: the sampling loop, and what it tells of each trial.

package admit

import (
	"context"
	"slices"
	"time"

	"github.com/runall/runall/gpu"
)

// Sample is one measurement of the devices, with what the admitter holds reserved on each
// and what each trial on them holds.
type Sample struct {
	Devices  []gpu.Device
	Reserved []uint64
	Trials   []TrialMemory
	Busy     []TrialBusy // with Options.Busy, where the driver reports it
}

// TrialMemory is what one trial holds now (on its fullest device) and its peak.
type TrialMemory struct {
	ID           int // the Request's
	Memory, Peak uint64
}

// Start measures the devices every sampleEvery until Stop, calling onSample after each.
func (a *Admitter) Start(ctx context.Context, onSample func(Sample)) {
	m := a.meter
	// sample measures when due: every sampleEvery, or every tieSampleEvery while a launch
	// holds its device back until it is tied to its processes.
	var last time.Time // of the last sample taken here (Place and Release take their own)
	sample := func(force bool) {
		a.mu.Lock()
		now := m.now()
		if !force && now.Sub(last) < sampleEvery && !a.devs.tyingAny(m.pids, now) {
			a.mu.Unlock()
			return
		}
		last = now
		a.sampleLocked()
		s := Sample{Devices: slices.Clone(m.snap), Reserved: a.devs.reserved(m.snap, m.exact), Trials: a.devs.trialMemory(),
			Busy: m.readBusy(a.devs)}
		a.mu.Unlock()
		if onSample != nil && s.Devices != nil {
			onSample(s)
		}
	}
	sample(true) // the first, so that a run shorter than sampleEvery has one too
	m.loop.Start(ctx, tieSampleEvery, func() { sample(false) })
}

// Stop ends the sampling Start began.
func (a *Admitter) Stop() { a.meter.stop() }

// sampleLocked measures the devices, and on those where trials run their processes; it
// updates baselines, each trial's usage and peak, and learning.
func (a *Admitter) sampleLocked() {
	m := a.meter
	procs := m.readProcesses(a.devs)
	devs, ok := m.measure()
	if !ok {
		return
	}
	now := m.snapAt
	a.devs.fit(devs)
	for i := range devs {
		st := &a.devs.list[i]
		st.drained(devs[i].Used, now)
		if len(st.trials) == 0 {
			st.keepBaseline(devs[i].Used, now)
			m.others(a.devs, i)
			continue
		}
		if r, ok := procs[i]; ok && r.err == nil {
			found := m.pids
			m.attribute(a.devs, i, r.procs, now)
			if m.pids != found { // learners reserve what suits the PIDs found
				a.provisionLearnersLocked()
			}
		}
		st.usage(i, devs[i].Used, m.exact, now)
	}
	a.book.Settle(now)
	m.wake()
}

// Peak is the most memory the placement's trial was seen using on one device, and how that
// was measured.
func (a *Admitter) Peak(p *Placement) (uint64, Source) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case !a.meter.exact(p):
		return p.entry.Peak(), SourceDevice
	case a.meter.pids == PIDsHere:
		return p.entry.Peak(), SourceProcess
	}
	return p.entry.Peak(), SourceOrder
}

// PIDs says whose process IDs the driver reports, as found so far.
func (a *Admitter) PIDs() PIDs {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.meter.pids
}
