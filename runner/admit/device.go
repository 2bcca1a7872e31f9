package admit

import (
	"slices"
	"time"

	"github.com/runall/runall/gpu"
)

// devices is what the admitter keeps of the devices between measurements, one devState
// each, in the probe's order.
type devices struct {
	list []devState
}

// fit makes one state per measured device the first time they are measured: each
// device's baseline is what it used before runall placed anything there.
func (d *devices) fit(snap []gpu.Device) {
	if len(d.list) == len(snap) {
		return
	}
	d.list = make([]devState, len(snap))
	for i := range snap {
		d.list[i] = devState{baseline: snap[i].Used, procs: map[uint32]*Placement{}}
	}
}

// reserved is what runall's trials have yet to allocate on each device (devState.reserved).
func (d *devices) reserved(snap []gpu.Device, exact func(*Placement) bool) []uint64 {
	out := make([]uint64, len(d.list))
	for i := range d.list {
		out[i] = d.list[i].reserved(i, snap[i].Used, exact)
	}
	return out
}

// tyingAny reports whether a device holds launches back until a launch there is tied to
// its processes: then the devices are measured every tieSampleEvery, so that the tie, and
// the launches waiting for it, come sooner.
func (d *devices) tyingAny(pids PIDs, now time.Time) bool {
	for i := range d.list {
		if d.list[i].tying(pids, now) {
			return true
		}
	}
	return false
}

// trialMemory is what each trial placed on the devices holds now (on its fullest device),
// and its peak.
func (d *devices) trialMemory() []TrialMemory {
	var out []TrialMemory
	seen := map[*Placement]bool{}
	for _, st := range d.list {
		for _, p := range st.trials {
			if seen[p] {
				continue
			}
			seen[p] = true
			var now uint64
			for _, u := range p.usage {
				now = max(now, u)
			}
			out = append(out, TrialMemory{ID: p.req.ID, Memory: now, Peak: p.entry.Peak()})
		}
	}
	return out
}

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

// remove takes p off this device, dev, which uses used now, as its trial ends: what it
// held is on its way out (drain), and the processes it leaves behind are no trial's.
func (st *devState) remove(p *Placement, dev int, used uint64, exact func(*Placement) bool, now time.Time) {
	st.drain(p, dev, used, exact, now)
	st.trials = slices.DeleteFunc(st.trials, func(q *Placement) bool { return q == p })
	for pid, owner := range st.procs {
		if owner == p {
			st.procs[pid] = nil
		}
	}
	if len(st.trials) == 0 {
		st.releasedAt = now
	}
}
