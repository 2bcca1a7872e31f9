// Measuring: the sampling loop, and what it tells of each trial.

package hostadmit

import (
	"context"
	"time"
)

// sampleEvery is how often the container and the trials' processes are measured while
// trials run: as GPU memory is.
const sampleEvery = 250 * time.Millisecond

// recentKeep is how long measured use is kept for an OOM kill's message: the kill comes
// between two samples, and the sample after it shows the memory it freed.
const recentKeep = 2 * time.Second

// TrialMemory is what one trial's processes hold now, and their peak.
type TrialMemory struct {
	ID           int // the Request's
	Memory, Peak uint64
}

// Start measures every sampleEvery until Stop, calling onSample (when not nil) with each
// running trial's memory.
func (a *Admitter) Start(ctx context.Context, onSample func([]TrialMemory)) {
	a.loop.Start(ctx, sampleEvery, func() {
		a.mu.Lock()
		a.sampleLocked()
		tm := make([]TrialMemory, 0, len(a.running))
		for _, p := range a.running {
			tm = append(tm, TrialMemory{ID: p.req.ID, Memory: p.usage, Peak: p.entry.Peak()})
		}
		a.mu.Unlock()
		if onSample != nil {
			onSample(tm)
		}
	})
}

// Stop ends the sampling Start began.
func (a *Admitter) Stop() { a.loop.Stop() }

// sampleLocked measures the container, and the processes of each running trial.
func (a *Admitter) sampleLocked() {
	now := a.now()
	m, err := a.mem.Read()
	a.snap.err, a.snap.at = err, now
	if err != nil {
		return
	}
	a.snap.Memory = m
	kept := a.snap.recent[:0]
	for _, u := range a.snap.recent {
		if now.Sub(u.at) <= recentKeep {
			kept = append(kept, u)
		}
	}
	a.snap.recent = append(kept, usedAt{now, m.Used})
	var roots []int
	for _, p := range a.running {
		roots = append(roots, p.roots...)
	}
	if len(roots) > 0 {
		trees := a.trees(roots)
		for _, p := range a.running {
			var held uint64
			for _, r := range p.roots {
				held += trees[r].Bytes()
			}
			p.usage = held
			p.entry.Grew(held, true, now) // a process tree's memory is the trial's own
		}
	}
	a.book.Settle(now)
	a.changedLocked()
}
