package admit

import (
	"fmt"
	"time"

	"github.com/runall/runall/gpu"
)

// learnSettle is how long a learning trial's memory must stay flat before the rest of its
// group is admitted at the learned need; a trial that ends sooner is learned from at its end.
const learnSettle = 10 * time.Second

// needLocked is what req needs per device now, whether it is the trial that learns its
// group's need, or why it must wait.
func (a *Admitter) needLocked(req Request) (need uint64, learning bool, wait string) {
	if n, ok := a.raised[req.ID]; ok {
		return n, false, ""
	}
	if !req.Auto {
		return req.Memory, false, ""
	}
	if n, ok := a.hist.Learned(req.Group); ok {
		return n, false, ""
	}
	if p, ok := a.learning[req.Group]; ok {
		return 0, false, fmt.Sprintf("waits for %q to measure the group's GPU memory", p.req.Name)
	}
	return 0, true, ""
}

// settleLearningLocked learns from the trials whose memory has stopped growing.
func (a *Admitter) settleLearningLocked() {
	for _, p := range a.learning {
		if !p.grewAt.IsZero() && time.Since(p.grewAt) >= learnSettle && p.peak > 0 {
			a.learnLocked(p)
		}
	}
}

// learnLocked fixes a group's need from its learning trial's peak; the trial keeps running,
// now reserving what it taught.
func (a *Admitter) learnLocked(p *Placement) {
	need := learnedNeed(p.peak)
	a.hist.SetLearned(p.req.Group, p.req.Name, need)
	delete(a.learning, p.req.Group)
	p.learning = false
	p.reserve = need
}

// endLearningLocked learns from a learning trial that ends before its memory settled. One
// that used nothing teaches nothing: the group's next trial learns instead.
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
	const step = 64 << 20
	n := peak + peak/20
	return (n + step - 1) / step * step
}

// Requeue is the admitter's answer to a trial that ran out of GPU memory: whether it goes
// again, and with what need. It goes again at most Options.OOMRetries times, with its need
// raised to the peak seen and at least by a quarter, never beyond what a device can give.
// Call it after Release. requeues counts this trial's requeues so far, this one included.
func (a *Admitter) Requeue(p *Placement) (need uint64, requeues int, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := p.req.ID
	if a.requeues[id] >= a.oomRetries {
		return 0, a.requeues[id], false
	}
	a.requeues[id]++
	cur := p.reserve
	if cur == 0 {
		cur = p.peak
	}
	const step = 256 << 20
	need = max(p.peak, cur+cur/4)
	need = (need + step - 1) / step * step
	// Never more than a device can give: at worst the trial runs alone.
	if most := a.largestLocked(); most > 0 {
		need = min(need, most)
	}
	a.raised[id] = need
	if p.req.Auto {
		if learned, _ := a.hist.Learned(p.req.Group); need > learned {
			a.hist.SetLearned(p.req.Group, p.req.Name, need)
		}
	}
	return need, a.requeues[id], true
}

// RequeueReason says why a requeued trial waits, for its waiting line.
func RequeueReason(need uint64) string {
	return "requeued after running out of GPU memory; now needs " + gpu.FormatSize(need)
}
