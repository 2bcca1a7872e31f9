package runner

import (
	"slices"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// lifecycle is how the parts of a run tell the one stream what happens to a task, and
// ask the ledger whether the run goes on. Every part gets it; none reaches the run.
type lifecycle struct {
	stream *event.Stream
	ledger *ledger
}

// emit sends ev on the run's stream.
func (l *lifecycle) emit(ev event.Event) { l.stream.Emit(ev) }

// say tells the run's status line (and log) a message.
func (l *lifecycle) say(line string) { l.emit(event.Event{Kind: event.RunStatus, Line: line}) }

// halted reports whether new tasks must not start.
func (l *lifecycle) halted() bool { return l.ledger.isHalted() }

// finish ends a task for good: its final event, which the results recorder and every other
// consumer take. d holds what the command learned as it ran (nil when it never ran).
func (l *lifecycle) finish(t *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail) {
	now := time.Now()
	dur, attempts := l.ledger.ending(t, now)
	ev := event.Event{Kind: event.TaskEnded, Final: true, Time: now, Task: t, Attempt: attempts, Status: status,
		ExitCode: exitCode, Duration: dur, Reason: reason, Detail: d}
	if d != nil {
		ev.Metrics = d.Metrics
	}
	l.emit(ev)
}

// failUnrunnable fails a task that can never run here (it needs more GPU memory than any
// device has, say).
func (l *lifecycle) failUnrunnable(t *plan.Task, reason string) {
	if t.IgnoreFailure {
		l.finish(t, results.StatusIgnored, -1, reason+" (ignored)", nil)
		return
	}
	l.finish(t, results.StatusFailed, -1, reason, nil)
	l.ledger.fail(t.StopOnFailure)
}

// skip marks a task (and everything in it) as not run.
func (l *lifecycle) skip(t *plan.Task, reason string) {
	if t.IsBlock() || len(t.Steps) > 0 {
		for _, c := range slices.Concat(t.Parallel, t.Steps) {
			l.skip(c, reason)
		}
		return
	}
	l.emit(event.Event{Kind: event.TaskSkipped, Task: t, Reason: reason})
}

// skipAll halts the run and skips every task: what the tasks needed could not start.
func (l *lifecycle) skipAll(tasks []*plan.Task, reason string) {
	l.ledger.halt()
	for _, t := range tasks {
		l.skip(t, reason)
	}
}
