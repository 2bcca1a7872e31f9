package sched

import (
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/plan"
)

// Resource is something a trial needs room in before it starts, besides a slot under the
// limit: GPU memory is one; host memory would be another. Admission asks every resource in
// order; when one says wait, the ones before it are released again.
type Resource interface {
	// Admit reserves room for t, recording its reservation in t, or says why t waits. An
	// error means t can never fit here: it fails.
	Admit(t *Trial) (ok bool, reason string, err error)
	// Release gives back what Admit reserved for t: it ended, or goes back to the line.
	Release(t *Trial)
	// Changed is closed when room may have opened other than by a trial's end (a device
	// freed memory); nil when only a trial's end frees room. It is asked before Admit is
	// tried, so that no change between the two is missed.
	Changed() <-chan struct{}
}

// GPU admits trials by their GPU memory, through the admitter; tasks that ask for none
// pass.
type GPU struct{ Admitter *admit.Admitter }

// Admit places t on a device with room for its need.
func (g GPU) Admit(t *Trial) (bool, string, error) {
	if t.Task.GPU == nil {
		return true, "", nil
	}
	p, reason, err := g.Admitter.Place(Request(t.Task))
	if err != nil || p == nil {
		return false, reason, err
	}
	t.Placement = p
	return true, "", nil
}

// Release frees t's placement.
func (g GPU) Release(t *Trial) {
	if t.Placement != nil {
		g.Admitter.Release(t.Placement)
		t.Placement = nil
	}
}

// Changed is closed when the devices' memory or the reservations changed.
func (g GPU) Changed() <-chan struct{} { return g.Admitter.Changed() }

// Request is what a task asks of the GPUs, in the admitter's terms.
func Request(t *plan.Task) admit.Request {
	return admit.Request{ID: t.ID, Name: t.Name, Group: t.Group, Memory: t.GPU.Memory, Auto: t.GPU.Auto, Devices: t.GPU.Devices}
}
