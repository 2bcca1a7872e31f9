package sched

// Resource is something a trial needs room in before it starts, besides a slot under the
// limit: GPU memory is one, host memory another. Admission asks every resource in order;
// when one says wait, the ones before it are released again. A resource keeps what it
// reserved for a trial itself (keyed by the *Trial), until Release.
type Resource interface {
	// Admit reserves room for t, or says why t waits. An error means t can never fit here:
	// it fails.
	Admit(t *Trial) (ok bool, reason string, err error)
	// Release gives back what Admit reserved for t (nothing when it reserved nothing): t
	// ended, paused, or goes back to the line.
	Release(t *Trial)
	// Changed is closed when room may have opened other than by a trial's end (a device
	// freed memory); nil when only a trial's end frees room. It is asked before Admit is
	// tried, so that no change between the two is missed.
	Changed() <-chan struct{}
}
