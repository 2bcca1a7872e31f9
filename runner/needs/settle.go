package needs

import "time"

// Settling. A need runall raised or guessed is a first step, not a lasting one: a learner's
// provisional reservation, and a need doubled after running out of memory (its own, or a
// sibling's), would otherwise hold memory the trial never uses, and turn a packed sweep into
// a serial one. Once such a trial's memory has stopped growing for LearnSettle, its need
// settles to its own peak plus the learning margin (LearnedNeed): it reserves that from then
// on, a requeue of it starts from it, and its group's next trials need no less. Its results
// report that need, or, where it ended sooner, its peak plus the margin as of its end
// (Final). Only a peak of the trial's own settles a raised need: a share of a device's
// growth among several trials counts what others use beyond their needs against each of
// them; such a need stays as raised, above the trial's use, never below it.

// Settle learns from the learners whose memory has stopped growing, and settles the raised
// needs of the trials whose own memory has.
func (b *Book) Settle(now time.Time) {
	for _, t := range b.learning {
		if t.flat(now) {
			b.learn(t)
		}
	}
	for t := range b.trials {
		if t.raised && t.settled == 0 && t.peakOwn && t.flat(now) {
			b.settleRaised(t)
		}
	}
}

// settleRaised settles a raised need to t's own peak plus the margin: t reserves it, its
// next requeue starts from it, and its group's siblings need no less.
func (b *Book) settleRaised(t *Trial) {
	need := LearnedNeed(t.peak)
	t.settled, t.reserve = need, need
	if _, ok := b.raised[t.req.ID]; ok {
		b.raised[t.req.ID] = need
	}
	if t.req.Auto {
		b.learnAtLeast(t.req, need)
		return
	}
	if g := b.groupRaised[t.req.Group]; g > 0 {
		b.groupRaised[t.req.Group] = max(g, need)
	}
}

// learnAtLeast raises req's group's learned need to need, where it is less.
func (b *Book) learnAtLeast(req Request, need uint64) {
	if learned, _ := b.hist.Learned(req.Group); need > learned {
		b.hist.SetLearned(req.Group, req.Name, need)
	}
}
