package needs

import "time"

// Trial is the book's record of one admitted trial: its request, what it reserves, and the
// most it was seen to hold. The admitter that placed it holds it (a GPU or host placement
// does) and tells it what the trial holds as it runs.
type Trial struct {
	req      Request
	need     uint64 // what it was admitted with (Need's); 0 for a learner
	reserve  uint64 // what it reserves: its need; a learner's provisional one; its settled one
	learning bool   // the first trial of an Auto group, learning its need
	raised   bool   // admitted on a need raised after running out of memory (settle.go)
	settled  uint64 // its need settled to its own peak plus the margin; 0 until then
	peak     uint64 // the most it was seen to hold (on one device, for GPUs)
	grewAt   time.Time
	peakOwn  bool // its peak is its own figure, not a share of a device's growth
}

// Request is what t's trial asked.
func (t *Trial) Request() Request { return t.req }

// Need is what t was admitted with; 0 for a learner.
func (t *Trial) Need() uint64 { return t.need }

// Reserve is what t's trial is expected to take in all, for the room its admitter keeps
// for it: its need; while it learns, the provisional reservation its admitter gave it;
// once settled, its settled need.
func (t *Trial) Reserve() uint64 { return t.reserve }

// Provision sets what a learner reserves until its need is known: the admitter's call
// (a quarter of the device or the container, or nothing where it learns alone).
func (t *Trial) Provision(reserve uint64) {
	if t.learning {
		t.reserve = reserve
	}
}

// Learning reports whether t is its group's learner, its need not yet known.
func (t *Trial) Learning() bool { return t.learning }

// Peak is the most t's trial was seen to hold.
func (t *Trial) Peak() uint64 { return t.peak }

// Grew tells the book what t's trial holds now, seen at now; own says whether that is the
// trial's own figure (its processes' memory) rather than a share of a device's growth.
func (t *Trial) Grew(holds uint64, own bool, now time.Time) {
	if holds > t.peak {
		t.peak, t.grewAt, t.peakOwn = holds, now, own
	}
}

// LearnSettle is how long a trial's memory must stay flat before its need settles to its
// peak: a learner's group is then admitted at the learned need; a trial that ends sooner
// is learned from at its end.
const LearnSettle = 10 * time.Second

// flat reports whether t's memory has stopped growing: it grew, and not for LearnSettle.
func (t *Trial) flat(now time.Time) bool {
	return !t.grewAt.IsZero() && t.peak > 0 && now.Sub(t.grewAt) >= LearnSettle
}
