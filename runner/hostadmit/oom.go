package hostadmit

import (
	"fmt"

	"github.com/runall/runall/size"
)

// OOMKilled says whether the kernel's OOM killer took p's trial: killed is whether its
// process died of SIGKILL (or its shell reported one, exit 137) that runall did not send;
// it was the OOM killer's for certain when the cgroup's oom_kill counter rose while the
// trial ran. The reason names the limit and the use just before the kill.
func (a *Admitter) OOMKilled(p *Placement, killed bool) (reason string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !killed || a.snap.err != nil {
		return "", false
	}
	a.sampleLocked()
	if !a.snap.HasOOMKills || a.snap.OOMKills <= p.oomStart {
		return "", false
	}
	var used uint64
	for _, u := range a.snap.recent {
		used = max(used, u.used)
	}
	return fmt.Sprintf("killed by the kernel's OOM killer: the container's memory limit is %s, in use %s",
		size.Format(a.snap.Limit), size.Format(used)), true
}

// Requeue is the admitter's answer to a trial the OOM killer took: whether it goes again,
// and with what need; requeues counts its requeues so far, this one included. The book of
// needs decides (needs.Book.Requeue: twice the measured need for one that went beyond what
// it reserved, the same need for a neighbour's victim).
//
// The kill came while the trial's processes held their peak, so its need is at least that.
// Never beyond the limit less the margin: a peak beyond that fails the trial with
// ErrNeverFits.
func (a *Admitter) Requeue(p *Placement) (need uint64, requeues int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	measured, most := p.entry.Peak(), a.snap.most(a.margin(a.snap.Limit))
	if measured > most {
		return 0, a.book.Requeues(p.req.ID), fmt.Errorf("%w: it was killed holding %s; the container's limit gives %s after the margin",
			ErrNeverFits, size.Format(measured), size.Format(most))
	}
	return a.book.Requeue(p.entry, measured, most)
}

// RequeueReason says why a requeued trial waits, for its waiting line.
func RequeueReason(need uint64) string {
	return "requeued after the OOM killer took it; now needs " + size.Format(need) + " of host memory"
}
