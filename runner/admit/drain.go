package admit

import "time"

// Memory on its way out. A trial's memory does not leave its device the instant its process
// exits: the driver frees it over a while (about a second on an H100), and counts it as used
// meanwhile though no process holds it. Taken for the growth of the trials still there, it
// would shrink their reservations (admitting trials into memory not yet free) and be given
// to estimated trials as theirs. So each device keeps what its ended trials held and it has
// not yet been seen to give back: its draining memory, left out of the growth trials explain.

// drainLocked records, at p's release, that what it held on dev is on its way out: no more
// than the device's growth that the trials still there do not explain, for memory freed at
// once is gone already.
func (a *Admitter) drainLocked(p *Placement, dev int, now time.Time) {
	st := &a.devs[dev]
	unexplained := sub(a.snap[dev].Used, st.baseline)
	for _, q := range st.trials {
		if q != p && a.exactLocked(q) {
			unexplained = sub(unexplained, q.usage[dev])
		}
	}
	st.draining = min(st.draining+p.held[dev], unexplained)
	st.drainSince = now
}

// drainedLocked updates dev's draining memory from a new measurement: what the device's use
// fell by was given back, for runall's trials hold their memory until they end (a caching
// allocator keeps what it took). What is not seen to go within releaseSettle is forgotten.
func (a *Admitter) drainedLocked(dev int, now time.Time) {
	st := &a.devs[dev]
	used := a.snap[dev].Used
	if used < st.lastUsed {
		st.draining = sub(st.draining, st.lastUsed-used)
	}
	if now.Sub(st.drainSince) >= releaseSettle {
		st.draining = 0
	}
	st.lastUsed = used
}

// grownLocked is how much more dev uses than when none of runall's trials ran there, less
// the memory of ended trials still on its way out.
func (a *Admitter) grownLocked(dev int) uint64 {
	st := &a.devs[dev]
	return sub(a.snap[dev].Used, st.baseline+st.draining)
}

// lowerBaselineLocked lowers dev's baseline to what the device uses beyond runall's trials'
// own processes, when it uses less: others can use no more than that. A baseline measured
// while memory was still on its way out (a run that ended just before this one started)
// would otherwise stay too high for as long as trials run there, hiding their growth. (The
// processes are read before the use, so that they never show more than it: readProcessesLocked.)
func (a *Admitter) lowerBaselineLocked(dev int) {
	st := &a.devs[dev]
	rest := a.snap[dev].Used
	for _, p := range st.trials {
		if a.exactLocked(p) {
			rest = sub(rest, p.usage[dev])
		}
	}
	st.baseline = min(st.baseline, rest)
}
