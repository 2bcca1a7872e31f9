// Package failfast stops a broken sweep early, once (fail-fast): when a block's first trials
// all fail for good with one signature (runner/failclass: the class, the exit, the error
// line with its numbers, paths and addresses taken out) before any of its trials succeeded
// or reported a metric, the run launches no more trials after fail-fast of them, and fails
// with one grouped error. A block whose failures differ, or one trial of which succeeded or
// reported a metric, goes on as before. Only trials with stop-on-failure: false are
// counted: with true, the first failure stops the run already.
package failfast

import (
	"fmt"
	"strings"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Halt stops the run launching trials and fails it; why is the grouped error, one line first.
type Halt func(why string)

// Watch is the consumer: its Event runs on the emitting goroutine and keeps counts alone;
// halt is called once, where a block's count is reached.
type Watch struct {
	halt Halt

	mu     sync.Mutex
	blocks map[*plan.Faults]*block
}

// block is what one block's trials showed so far.
type block struct {
	name     string
	limit    int
	disarmed bool // a trial succeeded, reported a metric, or failed otherwise
	fired    bool
	sig      string   // the signature its failures share
	trials   []string // the trials that failed with it, in order
	lines    []string // the first one's last lines
}

// New is the watch of p's blocks whose fail-fast is on; nil when none is.
func New(p *plan.Plan, halt Halt) *Watch {
	w := &Watch{halt: halt, blocks: map[*plan.Faults]*block{}}
	for _, b := range p.Tasks {
		if b.IsBlock() && b.Faults != nil && b.Faults.FailFast > 0 {
			w.blocks[b.Faults] = &block{name: b.Name, limit: b.Faults.FailFast}
		}
	}
	if len(w.blocks) == 0 {
		return nil
	}
	return w
}

// Event counts a block's trials' final failures by signature, and disarms the block at its
// first success, metric or other failure.
func (w *Watch) Event(ev event.Event, emit func(event.Event)) {
	if ev.Task == nil || ev.Task.Faults == nil || ev.Kind != event.TaskMetric && (ev.Kind != event.TaskEnded || ev.End != event.EndFinal) {
		return
	}
	w.mu.Lock()
	b := w.blocks[ev.Task.Faults.Block()]
	if b == nil || b.disarmed || b.fired {
		w.mu.Unlock()
		return
	}
	why := b.take(ev)
	w.mu.Unlock()
	if why != "" {
		for _, l := range strings.Split(why, "\n") {
			emit(event.Event{Kind: event.RunStatus, Line: l})
		}
		w.halt(why)
	}
}

// take applies ev to the block, and says the grouped error when it stops the block.
func (b *block) take(ev event.Event) string {
	switch {
	case ev.Kind == event.TaskMetric, ev.Status == results.StatusOK, ev.Status == results.StatusIgnored:
		b.disarmed = true
		return ""
	case ev.Status != results.StatusFailed || ev.Task.StopOnFailure:
		return "" // pruned, diverged, stopped: not a failure of the trial; stop-on-failure stops the run itself
	}
	sig := signature(ev)
	if b.sig != "" && sig != b.sig {
		b.disarmed = true // failures that differ: bad configurations, not a broken sweep
		return ""
	}
	if b.sig == "" {
		b.sig, b.lines = sig, lastLines(ev.Detail)
	}
	b.trials = append(b.trials, ev.Task.Name)
	if len(b.trials) < b.limit {
		return ""
	}
	b.fired = true
	return b.message()
}

// signature is the failure's signature: its attempt's, or of the reason it never ran.
func signature(ev event.Event) string {
	if ev.Try != nil && ev.Try.Signature != "" {
		return ev.Try.Signature
	}
	return "failed: " + failclass.Generic(ev.Reason)
}

// lastLines are the last lines of a failed trial's output, its stderr's where it has some.
func lastLines(d *event.Detail) []string {
	if d == nil {
		return nil
	}
	lines := d.StderrTail
	if len(lines) == 0 {
		lines = d.StdoutTail
	}
	return lines[max(len(lines)-5, 0):]
}

// message is the grouped error: what the trials share, which they are, the first one's last
// lines, and what to do.
func (b *block) message() string {
	var s strings.Builder
	fmt.Fprintf(&s, "fail-fast: the first %d trials of %q failed alike before any succeeded or reported a metric: runall starts no more trials\n", len(b.trials), b.name)
	fmt.Fprintf(&s, "  signature: %s\n", b.sig)
	fmt.Fprintf(&s, "  trials: %s\n", strings.Join(b.trials, ", "))
	if len(b.lines) > 0 {
		fmt.Fprintf(&s, "  %s's last lines:\n", b.trials[0])
		for _, l := range b.lines {
			fmt.Fprintf(&s, "    %s\n", l)
		}
	}
	s.WriteString("  fix what they share (the command, its environment, its data) and run again; fail-fast: off on the block or in config runs every trial whatever its failures")
	return s.String()
}
