// Measuring: the sampling loop, what it tells of each trial, and learning.

package hostadmit

import (
	"context"
	"fmt"
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
	ctx, a.cancel = context.WithCancel(ctx)
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.mu.Lock()
				a.sampleLocked()
				tm := make([]TrialMemory, 0, len(a.running))
				for _, p := range a.running {
					tm = append(tm, TrialMemory{ID: p.req.ID, Memory: p.usage, Peak: p.peak})
				}
				a.mu.Unlock()
				if onSample != nil {
					onSample(tm)
				}
			}
		}
	}()
}

// Stop ends the sampling Start began.
func (a *Admitter) Stop() {
	if a.cancel != nil {
		a.cancel()
		<-a.done
	}
}

// sampleLocked measures the container, and the processes of each running trial.
func (a *Admitter) sampleLocked() {
	now := a.now()
	m, err := a.mem.Read()
	a.snapErr, a.snapAt = err, now
	if err != nil {
		return
	}
	a.snap = m
	kept := a.recent[:0]
	for _, u := range a.recent {
		if now.Sub(u.at) <= recentKeep {
			kept = append(kept, u)
		}
	}
	a.recent = append(kept, usedAt{now, m.Used})
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
			if held > p.peak {
				p.peak, p.grewAt = held, now
			}
		}
	}
	a.settleLearningLocked(now)
	a.changedLocked()
}

// learnSettle is how long a learning trial's memory must stay flat before the rest of its
// group is admitted at the learned need; one that ends sooner is learned from at its end.
const learnSettle = 10 * time.Second

// needLocked is what req needs now, whether it is the trial that learns its group's need,
// or why it must wait.
func (a *Admitter) needLocked(req Request) (need uint64, learning bool, wait string) {
	if n, ok := a.raised[req.ID]; ok {
		return n, false, ""
	}
	if !req.Auto {
		return max(req.Memory, a.groupRaised[req.Group]), false, ""
	}
	if n, ok := a.needs.Learned(req.Group); ok {
		return max(n, a.groupRaised[req.Group]), false, ""
	}
	if p, ok := a.learning[req.Group]; ok {
		return 0, false, fmt.Sprintf("waits for %q to measure the group's host memory", p.req.Name)
	}
	return 0, true, ""
}

// provisionalLocked is what a learning trial reserves until its need is known: a quarter of
// the limit. It grows past that at its own risk: an OOM kill requeues it with its peak.
func (a *Admitter) provisionalLocked() uint64 {
	const step = 64 << 20
	return a.snap.Limit / 4 / step * step
}

func (a *Admitter) settleLearningLocked(now time.Time) {
	for _, p := range a.learning {
		if p.peak > 0 && now.Sub(p.grewAt) >= learnSettle {
			a.learnLocked(p)
		}
	}
}

// learnLocked fixes a group's need from its learning trial's peak; the trial keeps running,
// now reserving what it taught.
func (a *Admitter) learnLocked(p *Placement) {
	need := learnedNeed(p.peak)
	a.needs.SetLearned(p.req.Group, p.req.Name, need)
	delete(a.learning, p.req.Group)
	p.learning, p.Need = false, need
}

// endLearningLocked learns from a learning trial that ends before its memory settled. One
// that held nothing teaches nothing: the group's next trial learns instead.
func (a *Admitter) endLearningLocked(p *Placement) {
	if !p.learning || a.learning[p.req.Group] != p {
		return
	}
	if p.peak > 0 {
		a.learnLocked(p)
		return
	}
	delete(a.learning, p.req.Group)
}

// learnedNeed pads a measured peak: sampling can miss a short spike.
func learnedNeed(peak uint64) uint64 {
	return roundUp(peak+peak/20, 64<<20)
}
