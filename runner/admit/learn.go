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
		return max(req.Memory, a.groupRaised[req.Group]), false, ""
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
		if p.flatLocked(a.snapAt) {
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
	p.learning, p.exclusive = false, false
	p.reserve, p.settled = need, need
}

// provisionLocked sets a learning trial's reservation: where each trial's memory is known
// from its own processes, a provisional one beside other trials; elsewhere none, alone on
// its devices, which its measured growth then is.
func (a *Admitter) provisionLocked(p *Placement) {
	if !a.perTrialLocked() {
		p.exclusive, p.reserve = true, 0
		return
	}
	p.exclusive = false
	p.reserve = 0
	for _, d := range p.Devices {
		p.reserve = max(p.reserve, a.provisional(d))
	}
}

// provisionLearnersLocked gives the learners placed before the admitter knew how per-trial
// memory is measured the reservation they would get now.
func (a *Admitter) provisionLearnersLocked() {
	for _, p := range a.learning {
		a.provisionLocked(p)
	}
}

// provisional is what a learning trial reserves on dev until its need is known: a quarter
// of the device. It grows past that at its own risk: an out-of-memory error requeues it
// with its measured need.
func (a *Admitter) provisional(dev int) uint64 {
	const step = 64 << 20
	return a.snap[dev].Total / 4 / step * step
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

// abandonLearningLocked ends the learning of a learner that ran out of memory: what it held
// when it failed is no need to learn from (Requeue records the need it showed instead).
func (a *Admitter) abandonLearningLocked(p *Placement) {
	if p.learning && a.learning[p.req.Group] == p {
		delete(a.learning, p.req.Group)
	}
	p.learning, p.exclusive = false, false
}

// learnedNeed pads a measured peak: sampling can miss a short spike.
func learnedNeed(peak uint64) uint64 {
	const step = 64 << 20
	n := peak + peak/20
	return (n + step - 1) / step * step
}

// Requeue is the admitter's answer to a trial that ran out of GPU memory: whether it goes
// again, and with what need; requeues counts its requeues so far, this one included.
//
// Its measured need is what it held, from its own processes (where they are known) or its
// error message, plus what it tried to allocate. A trial that went beyond its need
// under-declared it: its need becomes twice the measured one, so that one that
// under-declared by 5x fits by its second requeue, and its waiting siblings (the other
// copies of its for-each or matrix task) wait for the measured need too. One whose need
// could not be measured (no processes, a message that did not say what it held) gets twice
// its need. Never beyond the largest device: a measured need more than that fails the
// trial with ErrNeverFits.
//
// A trial that stayed within its need ran out because another one did not: it goes again
// with the same need, and that requeue does not count against oom-retries (up to
// victimRetries of them; none with oom-retries: 0), so that an honest trial is not failed
// for a neighbour's lie.
func (a *Admitter) Requeue(p *Placement, oom OOM) (need uint64, requeues int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := p.req.ID
	var measured uint64
	switch {
	case a.exactLocked(p):
		measured = max(p.peak, oom.Held) + oom.Tried
	case oom.Held > 0: // a device estimate is no trial's own figure; its message is
		measured = oom.Held + oom.Tried
	}
	// One allocation it tried is a need too, whatever is known of what it held: a trial
	// that asked for 90 GiB at once fails here even where its processes are not told apart.
	if most := a.largestLocked(); max(measured, oom.Tried) > most {
		return 0, a.requeues[id], fmt.Errorf("%w: it ran out of memory needing at least %s; the largest GPU gives %s after the margin",
			ErrNeverFits, gpu.FormatSize(max(measured, oom.Tried)), gpu.FormatSize(most))
	}
	cur := max(p.reserve, p.Need)
	if p.settled > 0 { // beyond its settled need, it is no victim of another's
		cur = p.settled
	}
	victim := measured > 0 && measured <= cur+cur/20 && a.oomRetries > 0
	charged := a.requeues[id] - a.victims[id]
	switch {
	case victim && a.victims[id] >= victimRetries:
		return 0, a.requeues[id], fmt.Errorf("out of GPU memory %d times within its need of %s: other trials use more than they declared", a.victims[id]+1, gpu.FormatSize(cur))
	case !victim && charged >= a.oomRetries:
		return 0, a.requeues[id], fmt.Errorf("out of GPU memory %d times (oom-retries: %d); it needed at least %s", charged+1, a.oomRetries, gpu.FormatSize(measured))
	}
	a.requeues[id]++
	a.abandonLearningLocked(p)
	p.raisedNeed = false // its need is decided here, not settled from this attempt's peak
	switch {
	case victim:
		a.victims[id]++
		need = max(cur, measured)
	case measured == 0: // nothing measured, nothing said: grow boldly all the same
		need = 2 * max(cur, 256<<20)
	default:
		need = 2 * measured
		a.groupRaised[p.req.Group] = max(a.groupRaised[p.req.Group], learnedNeed(measured))
	}
	need = min(roundUp(need, 256<<20), a.largestLocked())
	a.raised[id] = need
	if p.req.Auto && measured > 0 {
		if learned, _ := a.hist.Learned(p.req.Group); learnedNeed(measured) > learned {
			a.hist.SetLearned(p.req.Group, p.req.Name, learnedNeed(measured))
		}
	}
	return need, a.requeues[id], nil
}

// victimRetries bounds the requeues of a trial that ran out of memory within its own need.
const victimRetries = 3

func roundUp(n, step uint64) uint64 { return (n + step - 1) / step * step }

// RequeueReason says why a requeued trial waits, for its waiting line.
func RequeueReason(need uint64) string {
	return "requeued after running out of GPU memory; now needs " + gpu.FormatSize(need)
}
