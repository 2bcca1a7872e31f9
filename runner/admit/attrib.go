package admit

import (
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/proc"
)

// Per-trial memory. The driver reports each process on a device and the memory it holds.
// A trial's memory on a device is the sum of its processes there; to know which processes
// are a trial's, the admitter needs their PIDs to be runall's:
//
//   - Here: recent drivers translate PIDs into the caller's pid namespace (so do VMs, bare
//     metal and hostPID Pods). A process is a trial's when it is in the trial's process
//     group or descends from its shell.
//   - Elsewhere: older drivers inside a container report the host's PIDs, which name no
//     process of runall's. A process is tied to the trial launched on its device just
//     before it appeared; while a launch is not yet tied, no other trial is launched on
//     that device (for at most tieWindow).
//   - None: no processes reported at all. Each trial's memory is then estimated from the
//     device's growth, as when a trial's processes could not be told apart.
//
// Which case holds is found as trials run, never assumed: PIDs are here once one process
// of a trial is found by its lineage; elsewhere once a process that names nothing here is
// tied by order (and here again, should a trial's own PID show up after all); none once a
// device grew while reporting no process.

// PIDs says whose process IDs the driver reports, as far as the admitter has found out.
type PIDs int

const (
	PIDsUnknown   PIDs = iota // no trial's process seen yet
	PIDsHere                  // runall's own: trials' processes found by their PIDs
	PIDsElsewhere             // not runall's (the host's): tied to trials by the order they appear
	PIDsNone                  // no processes reported: memory estimated from each device's growth
)

func (m PIDs) String() string {
	return [...]string{"unknown", "here", "elsewhere", "none"}[m]
}

// Source says how a trial's memory figures were obtained.
type Source string

const (
	SourceProcess Source = "process" // its own processes, found by their PIDs
	SourceOrder   Source = "order"   // its own processes, tied to it by the order they appeared
	SourceDevice  Source = "device"  // an estimate: its share of its device's growth
)

const (
	// tieWindow is how long a launch may take to show a process on its device before
	// another trial is launched there anyway, where processes are tied by order.
	tieWindow = 10 * time.Second
	// tieQuiet keeps a tied launch's device to itself a moment longer, so that the other
	// processes a trial starts at once (DDP workers, a launcher's children) tie to it too.
	tieQuiet = time.Second
	// noneAfter: a device that grew this much under a trial while reporting no process has
	// a driver that reports none.
	noneAfter = 256 << 20 // CUDA's context alone takes more, and shows its process
)

// attribute takes the processes on dev and gives each new one an owner: a trial of this
// device, or none (someone else's). It records each trial's usage on dev.
func (m *meter) attribute(devs *devices, dev int, procs []gpu.Process, now time.Time) {
	st := &devs.list[dev]
	for _, p := range st.trials {
		p.usage[dev] = 0
	}
	seen := make(map[uint32]bool, len(procs))
	for _, pr := range procs {
		seen[pr.PID] = true
		owner, known := st.procs[pr.PID]
		if !known {
			owner = m.owner(devs, dev, pr, now)
			st.procs[pr.PID] = owner
		}
		if owner != nil {
			owner.usage[dev] += pr.UsedMemory
		}
	}
	for pid := range st.procs {
		if !seen[pid] {
			delete(st.procs, pid) // it exited
		}
	}
	if len(procs) == 0 && m.pids == PIDsUnknown {
		m.checkNone(devs, dev, now)
	}
}

// others records the processes on dev, which no trial of runall's runs on, as none of
// runall's: another user's process, there before any launch, must not be tied by order to
// the first trial launched there.
func (m *meter) others(devs *devices, dev int) {
	procs, err := m.probe.Processes(dev)
	if err != nil {
		return
	}
	st := &devs.list[dev]
	clear(st.procs)
	for _, pr := range procs {
		st.procs[pr.PID] = nil
	}
}

// owner finds the trial a process seen for the first time on dev belongs to.
func (m *meter) owner(devs *devices, dev int, pr gpu.Process, now time.Time) *Placement {
	st := &devs.list[dev]
	if pr.Local {
		if l, ok := m.lineage(int(pr.PID)); ok {
			for _, p := range st.trials {
				if p.hasRoot(l) {
					m.setPIDs(PIDsHere, devs)
					p.tie.lastTie = now
					return p
				}
			}
		}
		return nil // a process of this namespace that is not a trial's
	}
	if m.pids == PIDsHere || m.pids == PIDsNone {
		return nil
	}
	// Tie by order: to the one launch on this device still open; else to its one trial
	// that has no process yet. More than one such trial cannot be told apart.
	var open, unseen []*Placement
	for _, p := range st.trials {
		switch {
		case p.openLocked(now):
			open = append(open, p)
		case p.tie.lastTie.IsZero():
			unseen = append(unseen, p)
		}
	}
	cands := open
	if len(cands) == 0 {
		cands = unseen
	}
	switch len(cands) {
	case 0:
		return nil
	case 1:
		m.setPIDs(PIDsElsewhere, devs)
		cands[0].tie.lastTie = now
		return cands[0]
	}
	for _, p := range cands {
		p.tie.ambiguous = true
	}
	return nil
}

// setPIDs records what was found of the driver's PIDs. Finding a trial's own PID settles
// it: ties made by order before are forgotten, to be looked at again. (The admitter gives
// the learners the reservation that suits what was found: sampleLocked.)
func (m *meter) setPIDs(pids PIDs, devs *devices) {
	if m.pids == pids || m.pids == PIDsHere {
		return
	}
	m.pids = pids
	if pids == PIDsHere {
		for i := range devs.list {
			clear(devs.list[i].procs)
			for _, p := range devs.list[i].trials {
				p.tie.ambiguous = false
			}
		}
	}
}

// checkNone concludes that the driver reports no processes when a device has grown under
// runall's trials while showing none, in samples tieQuiet apart (a process and its memory
// may be read a moment apart, never for that long).
func (m *meter) checkNone(devs *devices, dev int, now time.Time) {
	st := &devs.list[dev]
	if len(st.trials) == 0 || st.grown(m.snap[dev].Used) < noneAfter {
		st.bareSince = time.Time{}
		return
	}
	switch {
	case st.bareSince.IsZero():
		st.bareSince = now
	case now.Sub(st.bareSince) >= tieQuiet:
		m.setPIDs(PIDsNone, devs)
	}
}

// tying reports whether the device must not take another launch yet: where processes are
// tied by order (pids), a launch there is not tied yet.
func (st *devState) tying(pids PIDs, now time.Time) bool {
	if pids != PIDsUnknown && pids != PIDsElsewhere {
		return false
	}
	for _, p := range st.trials {
		if p.openLocked(now) {
			return true
		}
	}
	return false
}

// openLocked reports whether p's latest launch is still being tied to its processes.
func (p *Placement) openLocked(now time.Time) bool {
	if p.tie.lastTie.Before(p.tie.launchedAt) {
		return now.Sub(p.tie.launchedAt) < tieWindow
	}
	return now.Sub(p.tie.lastTie) < tieQuiet
}

func (p *Placement) hasRoot(l proc.Lineage) bool {
	for _, r := range p.tie.roots {
		if l.Has(r) {
			return true
		}
	}
	return false
}

// usage updates every trial's usage and peak on dev, which uses used now: its processes'
// memory where that is known (exact), else its share of the growth they do not explain.
func (st *devState) usage(dev int, used uint64, exact func(*Placement) bool, now time.Time) {
	st.lowerBaseline(dev, used, exact)
	grown := st.grown(used)
	var estimated []*Placement
	for _, p := range st.trials {
		if exact(p) {
			grown = sub(grown, p.usage[dev])
		} else {
			estimated = append(estimated, p)
		}
	}
	for p, share := range shares(estimated, grown) {
		p.usage[dev] = share
	}
	for _, p := range st.trials {
		if u := p.usage[dev]; u > 0 {
			p.held[dev] = u
		}
		// Alone, its device's growth is its own, unless memory on its way out blurs it.
		own := exact(p) || (len(st.trials) == 1 && st.draining == 0)
		p.entry.Grew(p.usage[dev], own, now)
	}
}

// shares attributes grown, the growth of a device that no trial's processes explain, to
// the trials estimated there: in launch order, each up to its reservation; what exceeds the
// sum is counted against every one (an upper bound: someone uses more than declared, and it
// is not known who). A trial alone gets exactly the growth.
func shares(trials []*Placement, grown uint64) map[*Placement]uint64 {
	var declared uint64
	for _, p := range trials {
		declared += p.entry.Reserve()
	}
	over := sub(grown, declared)
	out := make(map[*Placement]uint64, len(trials))
	left := grown
	for _, p := range trials {
		s := min(left, p.entry.Reserve())
		left -= s
		out[p] = s + over
	}
	return out
}

// reserved is the memory runall's trials on this device, dev, which uses used now, have yet
// to allocate: each exact trial its reservation less what its processes hold; the
// estimated ones together, their reservations less the growth no trial's processes explain.
func (st *devState) reserved(dev int, used uint64, exact func(*Placement) bool) uint64 {
	grown := st.grown(used)
	var reserved, estimated uint64
	for _, p := range st.trials {
		if exact(p) {
			reserved += sub(p.entry.Reserve(), p.usage[dev])
			grown = sub(grown, p.usage[dev])
		} else {
			estimated += p.entry.Reserve()
		}
	}
	return reserved + sub(estimated, grown)
}

// releaseSettle is how long a device's use may keep falling after runall's last trial there
// ended: its memory is still being freed, and the baseline must not rise with it.
const releaseSettle = 5 * time.Second

// keepBaseline keeps the use of a device none of runall's trials runs on: what others
// hold. Right after a trial ended there, its memory may still be on its way out; the
// baseline then only falls, so that the next trial's growth is not hidden under it.
func (st *devState) keepBaseline(used uint64, now time.Time) {
	if now.Sub(st.releasedAt) < releaseSettle {
		st.baseline = min(st.baseline, used)
		return
	}
	st.baseline = used
}
