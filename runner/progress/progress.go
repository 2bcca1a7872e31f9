// Package progress reads how far a trial has come from what its script already prints: tqdm
// bars (PyTorch loops, Hugging Face's Trainer, Lightning), Keras's progress bars and epoch
// lines, Hugging Face's log dicts, runall's own "runall-progress iter=N of=M" lines, and, as
// the last resort, the steps of its metrics. From the iteration counts it keeps a rate (steps
// per second over a window, or the library's own it/s or s/it when the bar prints one) and an
// ETA from n/total.
//
// A script may draw several bars (nested loops, an evaluation bar beside the training one).
// Each is followed on its own, told apart by its label (digits aside: "Epoch 3" is the bar of
// "Epoch 0" drawn again) and its total; the one shown is the bar that moved most often, from
// the most explicit kind of source that spoke at all (Source: a runall-progress line, then a
// tqdm or Keras bar, then a Hugging Face log dict, then a metric's steps).
package progress

import (
	"math"
	"sync"
	"time"
)

// Source is the kind of output a progress was read from, in the order they are preferred.
type Source int

const (
	FromMetric Source = iota // a metric's steps: the last resort
	FromHFLog                // a Hugging Face log dict's epoch
	FromBar                  // a tqdm or Keras bar
	FromRunall               // a runall-progress line
	sourceCount
)

var sourceNames = [...]string{"metric", "hf-log", "bar", "runall-progress"}

// String names the source as the records and the page say it.
func (s Source) String() string {
	if s < 0 || s >= sourceCount {
		return "unknown"
	}
	return sourceNames[s]
}

// Progress is what a trial's output says of its progress: N of Total steps (Total 0 when
// unknown) of the bar it follows, at Rate steps per second (0 until known).
type Progress struct {
	N      float64
	Total  float64
	Rate   float64
	Unit   string // "it", "step", "epoch", ... as the output names its steps
	Label  string // the bar's label ("Epoch 2"), "" when it has none
	Source Source
	At     time.Time // when the output last said it
}

// ETA is how long the remaining steps take at Rate; ok is false without a total or a rate.
func (p Progress) ETA() (d time.Duration, ok bool) {
	if p.Total <= 0 || p.Rate <= 0 || p.N > p.Total {
		return 0, false
	}
	secs := (p.Total - p.N) / p.Rate
	if secs > float64(math.MaxInt64/int64(time.Second)) {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

// Fraction is N/Total, ok false without a total.
func (p Progress) Fraction() (f float64, ok bool) {
	if p.Total <= 0 {
		return 0, false
	}
	return min(p.N/p.Total, 1), true
}

// Window is how far back the rate from the timing of successive counts looks.
const Window = 30 * time.Second

// Reader reads one trial's output lines into its progress. Line is called serially (a
// trial's output is read in order); Progress may be called from any goroutine.
type Reader struct {
	mu    sync.Mutex
	bars  map[barKey]*bar
	keras kerasState
	hfMax float64 // the largest epoch a log dict said
}

// NewReader returns a reader that has read nothing.
func NewReader() *Reader { return &Reader{bars: map[barKey]*bar{}} }

// Restart forgets what was read: a new attempt prints its bars anew.
func (r *Reader) Restart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bars, r.keras, r.hfMax = map[barKey]*bar{}, kerasState{}, 0
}

// Line reads one line of the trial's output (stdout or stderr) seen at now. A line may be one
// update of a bar redrawn with \r or \b: only what it shows last is read. read says whether
// the line told progress. It returns an error for a runall-progress line it cannot read, and
// reads nothing from it.
func (r *Reader) Line(line string, now time.Time) (read bool, err error) {
	s := lastState(line)
	if s == "" {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok, err := parseLine(s, &r.keras)
	if err != nil || !ok {
		return false, err
	}
	if u.key.source == FromHFLog {
		if u.n <= r.hfMax {
			return false, nil // an evaluation's dict repeats the epoch of the last one
		}
		r.hfMax = u.n
	}
	r.update(u, now)
	return true, nil
}

// MetricStep reads that a metric reached step at now: the last resort, shown only while the
// output says nothing else of its progress.
func (r *Reader) MetricStep(name string, step int, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.update(update{key: barKey{source: FromMetric, label: name}, n: float64(step), unit: "step"}, now)
}

// maxBars bounds the bars a reader follows: a script that writes a new label on each bar
// (a loss in its desc) leaves out the bar that moved least, not the newest.
const maxBars = 64

func (r *Reader) update(u update, now time.Time) {
	b := r.bars[u.key]
	if b == nil {
		if len(r.bars) >= maxBars {
			r.dropLeastMoved()
		}
		b = &bar{}
		r.bars[u.key] = b
	}
	b.see(u, now)
}

// dropLeastMoved forgets the bar that moved least (of those, the one seen longest ago).
func (r *Reader) dropLeastMoved() {
	var least *bar
	var key barKey
	for k, b := range r.bars {
		if least == nil || b.advances < least.advances || b.advances == least.advances && b.at.Before(least.at) {
			least, key = b, k
		}
	}
	delete(r.bars, key)
}

// Progress is the progress of the bar the reader follows; ok is false before any.
func (r *Reader) Progress() (p Progress, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best *bar
	var key barKey
	for k, b := range r.bars {
		if best == nil || k.source > key.source || k.source == key.source && b.better(best, k, key) {
			best, key = b, k
		}
	}
	if best == nil {
		return Progress{}, false
	}
	return best.progress(key), true
}
