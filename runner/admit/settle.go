package admit

import "time"

// Settling. A need runall raised or guessed is a first step, not a lasting one: a learner's
// provisional reservation, and a need doubled after an out-of-memory error (its own, or a
// sibling's), would otherwise hold memory the trial never uses, and turn a packed sweep into
// a serial one. Once such a trial's memory has stopped growing for learnSettle, its need
// settles to its own peak plus the learning margin (learnedNeed): it reserves that from then
// on, a requeue of it starts from it, and its group's next trials need no less. Its results
// report that need, or, where it ended sooner, its peak plus the margin as of its end (Need).
// Only a peak of the trial's own settles a need: one measured from its processes, or from its
// device's growth while it was alone there. A share of a device's growth among several
// trials counts what others use beyond their needs against each of them; such a need stays
// as raised, above the trial's use, never below it.

// raisedLocked reports whether req is admitted on a need runall raised after an out-of-memory
// error, its own or a sibling's, rather than on the one it declared or learned.
func (a *Admitter) raisedLocked(req Request) bool {
	if _, ok := a.raised[req.ID]; ok {
		return true
	}
	return !req.Auto && a.groupRaised[req.Group] > req.Memory
}

// settleLocked settles the needs of the trials whose memory has stopped growing.
func (a *Admitter) settleLocked() {
	a.settleLearningLocked()
	for _, st := range a.devs {
		for _, p := range st.trials {
			if p.raisedNeed && p.settled == 0 && p.peakOwn && p.flatLocked(a.snapAt) {
				a.settleRaisedLocked(p)
			}
		}
	}
}

// settleRaisedLocked settles a raised need to p's own peak plus the margin: p reserves it,
// its next requeue starts from it, and its group's siblings need no less.
func (a *Admitter) settleRaisedLocked(p *Placement) {
	need := learnedNeed(p.peak)
	p.settled, p.reserve = need, need
	if _, ok := a.raised[p.req.ID]; ok {
		a.raised[p.req.ID] = need
	}
	if p.req.Auto {
		if learned, _ := a.hist.Learned(p.req.Group); need > learned {
			a.hist.SetLearned(p.req.Group, p.req.Name, need)
		}
		return
	}
	if g := a.groupRaised[p.req.Group]; g > 0 {
		a.groupRaised[p.req.Group] = max(g, need)
	}
}

// flatLocked reports whether p's memory has stopped growing: it grew, and not for
// learnSettle.
func (p *Placement) flatLocked(now time.Time) bool {
	return !p.grewAt.IsZero() && p.peak > 0 && now.Sub(p.grewAt) >= learnSettle
}

// Need is the need p's trial ends with, for its results: the one it was admitted with; or,
// where it learned its group's need or ran on a need runall raised, its own peak plus the
// margin (settled once its memory stopped growing, or as measured so far); where its peak is
// not its own figure, the larger of its raised need and that.
func (a *Admitter) Need(p *Placement) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case p.settled > 0:
		return p.settled
	case (p.learning || p.raisedNeed) && p.peak > 0 && p.peakOwn:
		return learnedNeed(p.peak)
	case p.raisedNeed:
		// Its peak is a share of its device's growth, no figure of its own: it may be more
		// than its use or less. Report the larger, so that a need is never less than it used.
		return max(p.Need, learnedNeed(p.peak))
	}
	return p.Need
}
