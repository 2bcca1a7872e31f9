package sched

import (
	"github.com/runall/runall/runner/hostadmit"
)

// Host admits trials by the container's host memory, through the host admitter; tasks that
// set no memory: pass.
type Host struct{ Admitter *hostadmit.Admitter }

// Admit reserves room in the container's memory for t's host need.
func (h Host) Admit(t *Trial) (bool, string, error) {
	spec := t.Task.Host
	if spec == nil {
		return true, "", nil
	}
	p, reason, err := h.Admitter.Place(hostadmit.Request{
		ID: t.Task.ID, Name: t.Task.Name, Group: spec.Group, Memory: spec.Memory, Auto: spec.Auto,
	})
	if err != nil || p == nil {
		return false, reason, err
	}
	t.HostPlacement = p
	return true, "", nil
}

// Release frees t's room.
func (h Host) Release(t *Trial) {
	if t.HostPlacement != nil {
		h.Admitter.Release(t.HostPlacement)
		t.HostPlacement = nil
	}
}

// Changed is closed when the container's memory was measured again, or a trial released.
func (h Host) Changed() <-chan struct{} { return h.Admitter.Changed() }
