package runner

import (
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// ledger is the record of a run: each command's result, and whether the run was halted,
// failed or interrupted. The scheduler writes it; results() reads it at the end.
type ledger struct {
	mask *masker

	mu          sync.Mutex
	byID        map[int]*results.Task // results of command tasks, by Task.ID
	halted      bool                  // no new task starts
	failed      bool                  // a task failed and its failure was not ignored
	interrupted syscall.Signal        // 0 unless a signal stopped the run
}

func newLedger(mask *masker) *ledger {
	return &ledger{mask: mask, byID: map[int]*results.Task{}}
}

// update runs fn on t's result under the ledger's lock.
func (l *ledger) update(t *plan.Task, fn func(res *results.Task)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fn(l.resultLocked(t))
}

func (l *ledger) resultLocked(t *plan.Task) *results.Task {
	res, ok := l.byID[t.ID]
	if !ok {
		res = &results.Task{ID: t.ID, Name: t.Name, Cmd: l.mask.Replace(t.Cmd), Status: results.StatusPending, ExitCode: -1, Params: paramsOf(t)}
		l.byID[t.ID] = res
	}
	return res
}

// halt stops new tasks from starting.
func (l *ledger) halt() {
	l.mu.Lock()
	l.halted = true
	l.mu.Unlock()
}

func (l *ledger) isHalted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.halted
}

// interrupt records the signal that stops the run; it reports whether it was the first.
func (l *ledger) interrupt(sig syscall.Signal) (first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first = l.interrupted == 0
	if first {
		l.interrupted = sig
	}
	l.halted = true
	return first
}

// stoppedBy is the signal that stopped the run, 0 while it runs on.
func (l *ledger) stoppedBy() syscall.Signal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.interrupted
}

// fail records a failure that was not ignored; stop-on-failure halts the run.
func (l *ledger) fail(stopOnFailure bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = true
	if stopOnFailure {
		l.halted = true
	}
}

// haltReason is why a task that was never started was skipped.
func (l *ledger) haltReason() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.interrupted != 0 {
		return "not started: runall was stopped by " + proc.SignalName(l.interrupted)
	}
	return "not started: an earlier task failed (stop-on-failure)"
}

// finish records a task's end; it returns the result's duration and attempts for the event.
func (l *ledger) finish(t *plan.Task, status results.Status, exitCode int, reason string) (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := l.resultLocked(t)
	res.Status, res.ExitCode, res.Reason = status, exitCode, reason
	res.FinishedAt = time.Now()
	if res.StartedAt.IsZero() {
		res.StartedAt = res.FinishedAt
	}
	return res.Duration(), res.Attempts
}

// skip marks a command task as not run, unless it already ran; it reports whether it did.
func (l *ledger) skip(t *plan.Task, reason string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := l.resultLocked(t)
	if res.Status != "" && res.Status != results.StatusPending {
		return false
	}
	res.Status, res.Reason, res.ExitCode = results.StatusSkipped, reason, -1
	return true
}

// tasks is every command task's result in plan order; logFile names each one's log.
func (l *ledger) tasks(p *plan.Plan, logFile func(*plan.Task) string) []results.Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []results.Task
	plan.WalkCommands(p.Tasks, func(t *plan.Task) {
		tr, ok := l.byID[t.ID]
		if !ok {
			tr = &results.Task{ID: t.ID, Name: t.Name, Cmd: l.mask.Replace(t.Cmd), Status: results.StatusSkipped, ExitCode: -1, Params: paramsOf(t)}
		}
		tr.LogFile = logFile(t)
		if tr.Status == results.StatusSkipped || tr.Status == results.StatusPending {
			tr.LogFile = ""
		}
		out = append(out, *tr)
	})
	return out
}

// status is the run's outcome so far.
func (l *ledger) status() (status results.Status, failed bool, interrupted syscall.Signal) {
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
