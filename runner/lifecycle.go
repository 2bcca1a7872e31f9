package runner

import (
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// lifecycle is how the parts of a run tell the one stream what happens to a task, and
// whether the run goes on: halted (no new task starts), failed (a task failed and its
// failure was not ignored), stopped by a signal. Every part gets it; none reaches the run.
// The results of the tasks are the ledger's, a consumer of the stream.
type lifecycle struct {
	stream *event.Stream
	ledger *ledger
	made   *madeTasks // the tasks made as the run went (a sampler's trials), for the outputs
	// settle are what the run's end waits for before it gathers its results: the consumers
	// whose work on their own goroutines goes into them (early stopping's decisions).
	settle []func()

	mu          sync.Mutex
	halt        bool           // no new task starts
	failed      bool           // a task failed and its failure was not ignored
	interrupted syscall.Signal // 0 unless a signal stopped the run
	haltWhy     string         // why it halted, when a rule halted it (fail-fast)
	// back is why the run gives the trials it stops back to their sweep (--claims).
	back givingBack
}

// givingBack is why the run gives the trials it stops back to their sweep: every GPU here
// is out of service, and a runall elsewhere runs them; "" while it does not.
type givingBack struct {
	mu  sync.Mutex
	why string
}

// outOfRoom fails and halts the run, as failWith does, for what leaves it no room to run
// trials here (every GPU is out of service): under --claims its trials go back to the sweep
// as they stop, for a runall elsewhere to resume them. The reason is set before the halt,
// so that a trial that stops for it sees it.
func (l *lifecycle) outOfRoom(why string) {
	l.back.mu.Lock()
	if l.back.why == "" {
		l.back.why, _, _ = strings.Cut(why, " (")
	}
	l.back.mu.Unlock()
	l.failWith(why)
}

// reason is why the run gives the trials it stops back to their sweep; "" when it does not.
func (b *givingBack) reason() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.why
}

func newLifecycle(mask *mask.Masker) *lifecycle {
	return &lifecycle{stream: &event.Stream{}, ledger: newLedger(mask), made: &madeTasks{}}
}

// emit sends ev on the run's stream.
func (l *lifecycle) emit(ev event.Event) { l.stream.Emit(ev) }

// say tells the run's status line (and log) a message.
func (l *lifecycle) say(line string) { l.emit(event.Event{Kind: event.RunStatus, Line: line}) }

// halted reports whether new tasks must not start.
func (l *lifecycle) halted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.halt
}

// fail records a failure that was not ignored; stop-on-failure halts the run.
func (l *lifecycle) fail(stopOnFailure bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = true
	l.halt = l.halt || stopOnFailure
}

// failWith fails and halts the run by a rule that says why (fail-fast: a broken sweep);
// the trials it skips say why in their first line.
func (l *lifecycle) failWith(why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed, l.halt = true, true
	if l.haltWhy == "" {
		l.haltWhy, _, _ = strings.Cut(why, "\n")
	}
}

// interrupt records the signal that stops the run, and halts it; it reports whether it
// was the first.
func (l *lifecycle) interrupt(sig syscall.Signal) (first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first = l.interrupted == 0
	if first {
		l.interrupted = sig
	}
	l.halt = true
	return first
}

// stoppedBy is the signal that stopped the run, 0 while it runs on.
func (l *lifecycle) stoppedBy() syscall.Signal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.interrupted
}

// stopped reports whether a signal stopped the run.
func (l *lifecycle) stopped() bool { return l.stoppedBy() != 0 }

// haltReason is why a task that was never started was skipped.
func (l *lifecycle) haltReason() string {
	if sig := l.stoppedBy(); sig != 0 {
		return "not started: runall was stopped by " + proc.SignalName(sig)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.haltWhy != "" {
		return "not started: " + l.haltWhy
	}
	return "not started: an earlier task failed (stop-on-failure)"
}

// outcome is the run's status so far: failed, stopped by a signal, or ok.
func (l *lifecycle) outcome() (status results.Status, failed bool, interrupted syscall.Signal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	status = results.StatusOK
	switch {
	case l.failed:
		status = results.StatusFailed
	case l.interrupted != 0:
		status = results.StatusStopped
	}
	return status, l.failed, l.interrupted
}

// finish ends a task for good: its final event, which the results recorder and every other
// consumer take. d holds what the command learned as it ran (nil when it never ran).
func (l *lifecycle) finish(t *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail) {
	now := time.Now()
	dur, attempts := l.ledger.ending(t, now)
	ev := event.Event{Kind: event.TaskEnded, End: event.EndFinal, Time: now, Task: t, Attempt: attempts, Status: status,
		ExitCode: exitCode, Duration: dur, Reason: reason, Detail: d}
	if d != nil {
		ev.Metrics, ev.Try = d.Metrics, d.Try
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
	l.fail(t.StopOnFailure)
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
	l.mu.Lock()
	l.halt = true
	l.mu.Unlock()
	for _, t := range tasks {
		l.skip(t, reason)
	}
}
