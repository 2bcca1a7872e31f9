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
}

// TrialMemory is what one trial holds now (on its fullest device) and its peak.
type TrialMemory struct {
	ID           int // the Request's
	Memory, Peak uint64
}

// Start measures the devices every sampleEvery until Stop, calling onSample after each.
func (a *Admitter) Start(ctx context.Context, onSample func(Sample)) {
	ctx, a.cancel = context.WithCancel(ctx)
	a.done = make(chan struct{})
	// sample measures when due: every sampleEvery, or every tieSampleEvery while a launch
	// holds its device back until it is tied to its processes.
	var last time.Time // of the last sample taken here (Place and Release take their own)
	sample := func(force bool) {
		a.mu.Lock()
		now := a.now()
		if !force && now.Sub(last) < sampleEvery && !a.tyingAnyLocked(now) {
			a.mu.Unlock()
			return
		}
		last = now
		a.sampleLocked()
		s := Sample{Devices: slices.Clone(a.snap), Reserved: a.reservedLocked(), Trials: a.trialMemoryLocked()}
		a.mu.Unlock()
		if onSample != nil && s.Devices != nil {
			onSample(s)
		}
	}
	sample(true) // the first, so that a run shorter than sampleEvery has one too
	go func() {
		defer close(a.done)
		t := time.NewTicker(tieSampleEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sample(false)
			}
		}
	}()
}

// tyingAnyLocked reports whether a device holds launches back until a launch there is tied
// to its processes: then the devices are measured every tieSampleEvery, so that the tie,
// and the launches waiting for it, come sooner.
func (a *Admitter) tyingAnyLocked(now time.Time) bool {
	for i := range a.devs {
		if a.devs[i].tying(a.pids, now) {
			return true
		}
	}
	return false
}

// Stop ends the sampling Start began.
func (a *Admitter) Stop() { a.stop() }

// sampleLocked measures the devices, and on those where trials run their processes; it
// updates baselines, each trial's usage and peak, and learning.
func (a *Admitter) sampleLocked() {
	procs := a.readProcessesLocked()
	devs, ok := a.measureLocked()
	if !ok {
		return
	}
	now := a.snapAt
	if len(a.devs) != len(devs) {
		a.devs = make([]devState, len(devs))
		for i := range devs {
			a.devs[i] = devState{baseline: devs[i].Used, procs: map[uint32]*Placement{}}
		}
	}
	for i := range devs {
		a.devs[i].drained(devs[i].Used, now)
		if len(a.devs[i].trials) == 0 {
			a.devs[i].keepBaseline(devs[i].Used, now)
			a.othersLocked(i)
			continue
		}
		if r, ok := procs[i]; ok && r.err == nil {
			a.attributeLocked(i, r.procs, now)
		}
		a.usageLocked(i)
	}
	a.settleLocked()
	a.changedLocked()
}

// processesRead is what the driver listed on one device.
type processesRead struct {
	procs []gpu.Process
	err   error
}

// readProcessesLocked lists the processes on the devices where runall's trials run. They are
// read before the devices' use: a moment apart, a trial that grows in between then shows in
// the use and not yet in its processes, which errs on the safe side (its reservation holds,
// the baseline does not fall by it); read after, its growth would count twice, as memory it
// has yet to allocate and as memory it has.
func (a *Admitter) readProcessesLocked() map[int]processesRead {
	out := map[int]processesRead{}
	for i := range a.devs {
		if len(a.devs[i].trials) > 0 {
			procs, err := a.probe.Processes(i)
			out[i] = processesRead{procs, err}
		}
	}
	return out
}

func (a *Admitter) trialMemoryLocked() []TrialMemory {
	var out []TrialMemory
	seen := map[*Placement]bool{}
	for _, st := range a.devs {
		for _, p := range st.trials {
			if seen[p] {
				continue
			}
			seen[p] = true
			var now uint64
			for _, u := range p.usage {
				now = max(now, u)
			}
			out = append(out, TrialMemory{ID: p.req.ID, Memory: now, Peak: p.entry.Peak()})
		}
	}
	return out
}

func (a *Admitter) reservedLocked() []uint64 {
	out := make([]uint64, len(a.devs))
	for i := range a.devs {
		out[i] = a.reservedOnLocked(i)
	}
	return out
}

// Peak is the most memory the placement's trial was seen using on one device, and how that
// was measured.
func (a *Admitter) Peak(p *Placement) (uint64, Source) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case !a.exactLocked(p):
		return p.entry.Peak(), SourceDevice
	case a.pids == PIDsHere:
		return p.entry.Peak(), SourceProcess
	}
	return p.entry.Peak(), SourceOrder
}

// Usage is what the placement's trial holds now, on the device where it holds most.
func (a *Admitter) Usage(p *Placement) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var most uint64
	for _, u := range p.usage {
		most = max(most, u)
	}
	return most
}

// PIDs says whose process IDs the driver reports, as found so far.
func (a *Admitter) PIDs() PIDs {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pids
}
