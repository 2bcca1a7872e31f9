package output

import (
	"io"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Output renders a run for people or machines. One goroutine (the scheduler's output pump)
// calls its methods, in order, so implementations need no locking.
type Output interface {
	// Event renders one event.
	Event(ev event.Event)
	// Tick is called every Options.Tick while the run lasts: the live view redraws,
	// the plain output prints its periodic status line when StatusEvery has passed.
	Tick(now time.Time)
	// Close ends the output (the live view restores the cursor) and prints the summary.
	Close(res *results.Run) error
}

// Options configures every Output.
type Options struct {
	Plan        *plan.Plan
	W           io.Writer // usually stdout
	Color       bool      // escape codes for colour allowed (live view only; NO_COLOR clears it)
	Width       func() int
	Height      func() int    // live view: terminal rows, which a frame must fit (nil or 0: 24)
	StatusEvery time.Duration // plain: a line saying what runs and what waits (default 30s)
	// Estimate is how long a task took in earlier runs of the same file, for the live view's
	// ETA; ok is false when there is no history.
	Estimate func(t *plan.Task) (d time.Duration, ok bool)
	Now      func() time.Time
	// ParentOf is where a task made as the run goes (a sampler's trial, its steps) stands:
	// the block or trial it belongs to; ok is false for a task the run did not make.
	ParentOf func(t *plan.Task) (parent *plan.Task, ok bool)
}

// Mode picks how a run is shown.
type Mode string

const (
	Live  Mode = "live"  // a terminal: a line per task, redrawn
	Plain Mode = "plain" // containers, CI, pipes: prefixed lines, no escape codes
	JSON  Mode = "json"  // one JSON object per event
)

// New returns the output for mode; plain for an empty or unknown one.
func New(mode Mode, o Options) Output {
	switch mode {
	case Live:
		return NewLive(o)
	case JSON:
		return NewJSON(o)
	}
	return NewPlain(o)
}
