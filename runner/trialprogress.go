package runner

import (
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/progress"
	"github.com/runall/runall/runner/results"
)

// A trial's progress is read from every line of its output (stdout and stderr: tqdm draws on
// stderr) and from its metrics' steps, the last resort. The stream hears of it at most once
// every progressEvery per trial, whatever the rate its bars are drawn at: the ledger keeps
// the newest for /api/run, and its final result keeps where it stopped.

// progressEvery is how often a trial's progress is told at most.
const progressEvery = time.Second

// trialProgress is what a command read of its progress.
type trialProgress struct {
	reader  *progress.Reader
	mu      sync.Mutex  // all below: a metric's step may come from the metrics file's reader
	said    time.Time   // when the stream was last told
	timer   *time.Timer // tells it when progressEvery is over; nil when none waits
	stopped bool        // the trial ended: tell no more
	warned  bool        // a runall-progress line could not be read: said once
}

// progressLine reads one line of the command's output for its progress.
func (c *command) progressLine(line string) {
	now := time.Now()
	tp := &c.metrics.progress
	read, err := tp.reader.Line(line, now)
	if err != nil {
		tp.mu.Lock()
		said := tp.warned
		tp.warned = true
		tp.mu.Unlock()
		if !said {
			msg := c.mask.Replace(err.Error()) + ": not read (docs/taskfile.md, progress)"
			c.log.mark("progress: %s", msg)
			c.life.emit(event.Event{Kind: event.RunStatus, Task: c.t, Line: c.t.Name + ": " + msg})
		}
		return
	}
	if read {
		c.tellProgress(now)
	}
}

// progressStep reads a metric's step: the progress of a trial whose output says no other.
func (c *command) progressStep(name string, step int) {
	now := time.Now()
	c.metrics.progress.reader.MetricStep(name, step, now)
	c.tellProgress(now)
}

// tellProgress tells the stream the trial's progress; within progressEvery of the last time,
// it tells it when that is over, so that a bar's last state before a quiet spell is told.
// It holds tp.mu while it emits, so that none is told once stopProgress returned.
func (c *command) tellProgress(now time.Time) {
	tp := &c.metrics.progress
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.stopped {
		return
	}
	if wait := progressEvery - now.Sub(tp.said); wait > 0 {
		if tp.timer == nil {
			tp.timer = time.AfterFunc(wait, func() {
				tp.mu.Lock()
				tp.timer = nil
				tp.mu.Unlock()
				c.tellProgress(time.Now())
			})
		}
		return
	}
	if p := progressResult(tp.reader, true); p != nil {
		tp.said = now
		c.life.emit(event.Event{Kind: event.TaskProgress, Task: c.t, Attempt: c.turn.now, Progress: p})
	}
}

// stopProgress ends the telling as the trial ends: its result holds where it stopped.
func (c *command) stopProgress() {
	tp := &c.metrics.progress
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.stopped = true
	if tp.timer != nil {
		tp.timer.Stop()
		tp.timer = nil
	}
}

// progressResult is what r read as a result records it, nil when nothing; with eta, the
// time its steps left take.
func progressResult(r *progress.Reader, eta bool) *results.Progress {
	p, ok := r.Progress()
	if !ok {
		return nil
	}
	out := &results.Progress{Iter: p.N, Of: p.Total, Rate: p.Rate, Unit: p.Unit, Label: p.Label, Source: p.Source.String()}
	if d, ok := p.ETA(); ok && eta {
		out.ETASeconds = d.Seconds()
	}
	return out
}
