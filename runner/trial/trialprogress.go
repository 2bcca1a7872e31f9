package trial

import (
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/progress"
	"github.com/runall/runall/runner/results"
)

// A trial's progress is read from every line of its output (stdout and stderr: tqdm draws on
// stderr) and from its metrics' steps, the last resort. The stream hears of it at most once
// every progressEvery per trial, whatever the rate its bars are drawn at: the ledger keeps
// the newest for /api/run, and its final result keeps where it stopped.

// progressEvery is how often a trial's progress is told at most.
const progressEvery = time.Second

// trialProgress is what a command read of its progress, and the telling of it.
type trialProgress struct {
	reader *progress.Reader
	tell   func(*results.Progress) // tells the stream
	warn   func(string)            // says a line that could not be read

	mu      sync.Mutex  // all below: a metric's step may come from the metrics file's reader
	said    time.Time   // when the stream was last told
	timer   *time.Timer // tells it when progressEvery is over; nil when none waits
	stopped bool        // the trial ended: tell no more
	warned  bool        // a runall-progress line could not be read: said once
}

// newTrialProgress is the progress of task t's command, told on its run's stream; a line
// that cannot be read is said, masked, in its log too.
func newTrialProgress(run told, t *plan.Task, mask Masker, log *taskLog) trialProgress {
	return trialProgress{
		reader: progress.NewReader(),
		tell: func(p *results.Progress) {
			run.emit(event.Event{Kind: event.TaskProgress, Task: t, Progress: p})
		},
		warn: func(msg string) {
			msg = mask.Replace(msg) + ": not read (docs/taskfile.md, progress)"
			log.Mark("progress: %s", msg)
			run.emit(event.Event{Kind: event.RunStatus, Task: t, Line: t.Name + ": " + msg})
		},
	}
}

// line reads one line of the command's output.
func (tp *trialProgress) line(line string) {
	now := time.Now()
	read, err := tp.reader.Line(line, now)
	if err != nil {
		tp.mu.Lock()
		said := tp.warned
		tp.warned = true
		tp.mu.Unlock()
		if !said {
			tp.warn(err.Error())
		}
		return
	}
	if read {
		tp.told(now)
	}
}

// step reads a metric's step: the progress of a trial whose output says no other.
func (tp *trialProgress) step(name string, n int) {
	now := time.Now()
	tp.reader.MetricStep(name, n, now)
	tp.told(now)
}

// told tells the stream the progress; within progressEvery of the last time, it tells it when
// that is over, so that a bar's last state before a quiet spell is told. It holds mu while
// it tells, so that none is told once stop returned.
func (tp *trialProgress) told(now time.Time) {
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
				tp.told(time.Now())
			})
		}
		return
	}
	if p := progressResult(tp.reader, true); p != nil {
		tp.said = now
		tp.tell(p)
	}
}

// stop ends the telling as the trial ends (or goes back to the line): its result holds
// where it stopped. It returns that.
func (tp *trialProgress) stop() *results.Progress {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.stopped = true
	if tp.timer != nil {
		tp.timer.Stop()
		tp.timer = nil
	}
	return progressResult(tp.reader, false)
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
