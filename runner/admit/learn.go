package admit

import (
	"fmt"

	"github.com/runall/runall/size"
)

// provisionLocked sets a learning trial's reservation: where each trial's memory is known
// from its own processes, a provisional one beside other trials; elsewhere none, alone on
// its devices, which its measured growth then is.
func (a *Admitter) provisionLocked(p *Placement) {
	if !a.meter.perTrial() {
		p.exclusive = true
		p.entry.Provision(0)
		return
	}
	p.exclusive = false
	var reserve uint64
	for _, d := range p.Devices {
		reserve = max(reserve, a.meter.provisional(d))
	}
	p.entry.Provision(reserve)
}

// provisionLearnersLocked gives the learners placed before the admitter knew how per-trial
// memory is measured the reservation they would get now.
func (a *Admitter) provisionLearnersLocked() {
	for i := range a.devs.list {
		for _, p := range a.devs.list[i].trials {
			if p.entry.Learning() {
				a.provisionLocked(p)
			}
		}
	}
}

// Requeue is the admitter's answer to a trial that ran out of GPU memory: whether it goes
// again, and with what need; requeues counts its requeues so far, this one included. The
// book of needs decides (needs.Book.Requeue: twice the measured need for one that went
// beyond it, the same need for a neighbour's victim).
//
// Its measured need is what it held, from its own processes (where they are known) or its
// error message, plus what it tried to allocate. One whose need could not be measured (no
// processes, a message that did not say what it held) gets twice its need. Never beyond
// the largest device: a measured need more than that fails the trial with ErrNeverFits.
func (a *Admitter) Requeue(p *Placement, oom OOM) (need uint64, requeues int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var measured uint64
	switch {
	case a.meter.exact(p):
		measured = max(p.entry.Peak(), oom.Held) + oom.Tried
	case oom.Held > 0: // a device estimate is no trial's own figure; its message is
		measured = oom.Held + oom.Tried
	}
	// One allocation it tried is a need too, whatever is known of what it held: a trial
	// that asked for 90 GiB at once fails here even where its processes are not told apart.
	most := largest(a.meter.snap, a.margin)
	if max(measured, oom.Tried) > most {
		return 0, a.book.Requeues(p.req.ID), fmt.Errorf("%w: it ran out of memory needing at least %s; the largest GPU gives %s after the margin",
			ErrNeverFits, size.Format(max(measured, oom.Tried)), size.Format(most))
	}
	return a.book.Requeue(p.entry, measured, most)
}

// RequeueReason says why a requeued trial waits, for its waiting line.
func RequeueReason(need uint64) string {
	return "requeued after running out of GPU memory; now needs " + size.Format(need)
}

// Need is the need p's trial ends with, for its results: the one it was admitted with; or,
// where it learned its group's need or ran on a need runall raised, its own peak plus the
// margin (needs.Book.Final).
func (a *Admitter) Need(p *Placement) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.book.Final(p.entry)
}
