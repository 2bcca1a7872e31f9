package progress

import "time"

// barKey tells bars apart: by the kind of output, the label with its digits left out, and
// the total as printed (a training bar and an evaluation bar of one script differ in it).
type barKey struct {
	source Source
	label  string
	total  string
}

// update is one reading of a bar from one line.
type update struct {
	key   barKey
	label string  // as printed
	n     float64 // the count shown
	total float64 // 0 when unknown
	rate  float64 // the rate the line printed, 0 when none
	unit  string
}

// sample is a bar's count at a time; cum counts on across the bar's restarts (an epoch's
// bar drawn from 0 again), so that the rate does not drop to nothing at each.
type sample struct {
	at  time.Time
	cum float64
}

// maxSamples bounds what a bar keeps for its rate; a bar updated ten times a second keeps
// about the last Window of them.
const maxSamples = 300

// bar is one bar's state.
type bar struct {
	last     update
	at       time.Time
	base     float64 // the counts of the bar's earlier runs (restarts)
	advances int     // how many times its count rose: how often it moved
	samples  []sample
}

func (b *bar) see(u update, now time.Time) {
	if b.at.IsZero() {
		b.last = u
	}
	if u.n < b.last.n {
		b.base += b.last.n // drawn again from the start: a new epoch
	}
	if u.n != b.last.n || b.advances == 0 && u.n > 0 {
		b.advances++
	}
	b.last, b.at = u, now
	b.samples = append(b.samples, sample{at: now, cum: b.base + u.n})
	cut := 0
	for cut < len(b.samples)-2 && (now.Sub(b.samples[cut+1].at) >= Window || len(b.samples)-cut > maxSamples) {
		cut++
	}
	if cut > 0 {
		b.samples = append(b.samples[:0], b.samples[cut:]...)
	}
}

// rate is the printed rate of the last line when it had one, else the counts' rise over the
// window by the time it took.
func (b *bar) rate() float64 {
	if b.last.rate > 0 {
		return b.last.rate
	}
	if len(b.samples) < 2 {
		return 0
	}
	first, last := b.samples[0], b.samples[len(b.samples)-1]
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 || last.cum <= first.cum {
		return 0
	}
	return (last.cum - first.cum) / secs
}

// better reports whether b is to be followed rather than o, both of one source: the one that
// moved more often; on a tie, the one seen last.
func (b *bar) better(o *bar, k, ok barKey) bool {
	if b.advances != o.advances {
		return b.advances > o.advances
	}
	if !b.at.Equal(o.at) {
		return b.at.After(o.at)
	}
	return k.label+k.total < ok.label+ok.total // the same order at every call
}

func (b *bar) progress(k barKey) Progress {
	return Progress{N: b.last.n, Total: b.last.total, Rate: b.rate(), Unit: b.last.unit, Label: b.last.label, Source: k.source, At: b.at}
}
