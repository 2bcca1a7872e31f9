package admit

import (
	"slices"
	"time"
)

// devState is what the admitter keeps of one device between measurements: the trials
// placed there, the processes seen there and whose each is, and the memory others use
// (baseline) or ended trials are still giving back (draining, drain.go). Its methods take
// the device's measured use from the meter and, where a trial's own figure matters, the
// meter's judgement of whether it has one (exact).
type devState struct {
	baseline   uint64                // use by others: what it was when none of runall's trials ran here
	trials     []*Placement          // in launch order
	procs      map[uint32]*Placement // processes seen here, and the trial each is (nil: none of runall's)
	releasedAt time.Time             // when the last trial here ended
	draining   uint64                // memory ended trials held here, not yet given back (drain.go)
	drainSince time.Time             // when a trial here last ended
	lastUsed   uint64                // the use last measured, to see draining memory go
	bareSince  time.Time             // since when it has grown under trials and shown no process
}

// exclusive reports whether a trial here learns its need alone on the device.
func (st *devState) exclusive() bool {
	return slices.ContainsFunc(st.trials, func(p *Placement) bool { return p.exclusive && p.entry.Learning() })
}
