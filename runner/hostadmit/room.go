package hostadmit

import (
	"fmt"

	"github.com/runall/runall/size"
)

// The room arithmetic over a measurement of the container: what one trial can ever have,
// what the running trials hold reserved, and what a trial may take now. margin is what is
// kept free of the limit.

// most is the most one trial can have: the limit less the margin.
func (m measurement) most(margin uint64) uint64 { return sub(m.Limit, margin) }

// neverFits is the error of a need beyond most.
func (m measurement) neverFits(need, margin uint64) error {
	what := "the container's memory limit is"
	if !m.Limited {
		what = "the machine (no container limit) has"
	}
	return fmt.Errorf("%w: needs %s, %s %s (%s after the %s margin)", ErrNeverFits, size.Format(need),
		what, size.Format(m.Limit), size.Format(sub(m.Limit, margin)), size.Format(margin))
}

// room is what a trial may take now, and what the running trials hold reserved: each
// what it is expected to take in all (its need, or a learner's provisional one) less what
// its processes hold.
func (m measurement) room(margin uint64, running []*Placement) (room, reserved uint64) {
	for _, p := range running {
		reserved += sub(p.entry.Reserve(), p.usage)
	}
	return sub(sub(m.Room(), margin), reserved), reserved
}

// describe is the waiting line's account of the container's memory.
func (m measurement) describe(room, reserved, margin uint64) string {
	s := fmt.Sprintf("the container has %s free of %s (in use %s", size.Format(room), size.Format(m.Limit), size.Format(m.Used))
	if reserved > 0 {
		s += ", " + size.Format(reserved) + " reserved for trials still growing"
	}
	return s + ", " + size.Format(margin) + " margin)"
}

// provisional is what a learning trial reserves until its need is known: a quarter of the
// limit. It grows past that at its own risk: an OOM kill requeues it with its peak.
func (m measurement) provisional() uint64 {
	const step = 64 << 20
	return m.Limit / 4 / step * step
}
