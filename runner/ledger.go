package runner

import (
	"maps"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// ledger is the record of a run: each command's result, kept by the run's events (it is
// their first consumer), and whether the run was halted, failed or interrupted. gather
// reads it at the end, and whenever the live report asks for the results so far.
type ledger struct {
	mask *masker

	mu          sync.Mutex
	byID        map[int]*results.Task // results of command tasks, by Task.ID
	byIDLive    map[int]*liveTask     // what tasks that have not ended reported so far, by Task.ID
	halted      bool                  // no new task starts
	failed      bool                  // a task failed and its failure was not ignored
	interrupted syscall.Signal        // 0 unless a signal stopped the run
}

func newLedger(mask *masker) *ledger {
	return &ledger{mask: mask, byID: map[int]*results.Task{}, byIDLive: map[int]*liveTask{}}
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

// Event records what the run's events say of a task: the results recorder. It learns a
// task's result from its events alone: the final TaskEnded carries what the command
// learned as it ran (its Detail), a requeue how often its trial went back.
func (l *ledger) Event(ev event.Event, _ func(event.Event)) {
	if ev.Task == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live(ev)
	res := l.resultLocked(ev.Task)
	switch {
	case ev.Kind == event.TaskStarted:
		res.Attempts = ev.Attempt
		if res.StartedAt.IsZero() {
			res.StartedAt = ev.Time
		}
		res.Status = results.StatusRunning
		if ev.Devices != nil {
			res.Devices, res.GPUMemory = ev.Devices, ev.Need
		}
		res.PassedOver = max(res.PassedOver, ev.PassedOver)
	case ev.Kind == event.TaskEnded && ev.Requeued:
		res.Status, res.OOMRequeues = results.StatusPending, ev.Requeues
	case ev.Kind == event.TaskEnded && ev.Paused:
		res.Status, res.Reason = results.StatusPaused, ev.Reason
		if ev.Detail != nil {
			recordDetail(res, ev.Detail) // what it did up to its pause, until it resumes
		}
	case ev.Kind == event.TaskEnded && ev.Final:
		res.Status, res.ExitCode, res.Reason = ev.Status, ev.ExitCode, ev.Reason
		res.FinishedAt = ev.Time
		if res.StartedAt.IsZero() {
			res.StartedAt = res.FinishedAt
		}
		if ev.Detail != nil {
			recordDetail(res, ev.Detail)
		}
	case ev.Kind == event.TaskSkipped:
		res.Status, res.Reason, res.ExitCode = results.StatusSkipped, ev.Reason, -1
	}
}

// recordDetail keeps what a command learned as it ran in its result.
func recordDetail(res *results.Task, d *event.Detail) {
	res.StdoutTail, res.StderrTail = d.StdoutTail, d.StderrTail
	if d.OnGPU {
		res.PeakGPUMemory, res.PeakGPUMemorySource = max(res.PeakGPUMemory, d.PeakGPUMemory), d.PeakGPUMemorySource
		res.GPUMemory = d.GPUMemory
	}
	if d.OnHost {
		res.PeakHostMemory, res.HostMemory = max(res.PeakHostMemory, d.PeakHostMemory), d.HostMemory
	}
	if d.Signal != "" {
		res.Signal = d.Signal
	}
	res.Metrics, res.MetricSeries, res.MetricWarnings = d.Metrics, d.MetricSeries, d.MetricWarnings
	res.Resumes = d.Resumes
	if d.Lineage != nil {
		res.Lineage = d.Lineage
	}
}

// ending is what a task's final event says of it besides its status: how long it ran and
// its attempts, as recorded so far.
func (l *ledger) ending(t *plan.Task, now time.Time) (d time.Duration, attempts int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := l.resultLocked(t)
	if !res.StartedAt.IsZero() {
		d = now.Sub(res.StartedAt)
	}
	return d, res.Attempts
}

// startedAt is when t's first attempt started (zero before).
func (l *ledger) startedAt(t *plan.Task) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resultLocked(t).StartedAt
}

// attempts is how often t was started so far (across requeues).
// endedOK reports whether t ended for good and counted as a success (ok, or ignored).
func (l *ledger) endedOK(t *plan.Task) bool {
	st := l.statusOf(t)
	return st == results.StatusOK || st == results.StatusIgnored
}

// statusOf is t's status as recorded so far.
func (l *ledger) statusOf(t *plan.Task) results.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resultLocked(t).Status
}

func (l *ledger) attempts(t *plan.Task) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resultLocked(t).Attempts
}

// tasks is every command task's result in plan order; logFile names each one's log, and
// unseen is the status of a task no event told of.
func (l *ledger) tasks(p *plan.Plan, logFile func(*plan.Task) string, unseen results.Status) []results.Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []results.Task
	inPlan := map[int]bool{}
	plan.WalkCommands(p.Tasks, func(t *plan.Task) {
		inPlan[t.ID] = true
		tr, ok := l.byID[t.ID]
		if t.Search != nil && !ok {
			return // a sampler's template: its trials are listed, not it, unless its sampler failed
		}
		if !ok {
			tr = &results.Task{ID: t.ID, Name: t.Name, Cmd: l.mask.Replace(t.Cmd), Status: unseen, ExitCode: -1, Params: paramsOf(t)}
		}
		out = append(out, l.withLive(withLog(*tr, logFile(t))))
	})
	return append(out, l.madeWhileRunning(inPlan, logFile)...)
}

// withLog is r naming its log file, when it ran: a task that never started wrote none.
func withLog(r results.Task, path string) results.Task {
	r.LogFile = ""
	if r.Attempts > 0 {
		r.LogFile = path
	}
	return r
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

// paramsOf is a task's for-each or matrix values as its result records them.
func paramsOf(t *plan.Task) map[string]string {
	if len(t.Params) == 0 {
		return nil
	}
	m := make(map[string]string, len(t.Params))
	for _, p := range t.Params {
		m[p.Name] = p.Value
	}
	return m
}

// maxID is the highest task ID the ledger has a result for, 0 when none: tasks made while
// the run goes on (a sampler's trials) are numbered after it.
func (l *ledger) maxID() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id := range maps.Keys(l.byID) {
		n = max(n, id)
	}
	return n
}

// madeWhileRunning is the results of tasks the plan does not list (a sampler's trials), by
// ID; l.mu is held.
func (l *ledger) madeWhileRunning(inPlan map[int]bool, logFile func(*plan.Task) string) []results.Task {
	var out []results.Task
	for _, id := range slices.Sorted(maps.Keys(l.byID)) {
		if r := l.byID[id]; !inPlan[id] {
			out = append(out, l.withLive(withLog(*r, logFile(&plan.Task{ID: r.ID, Name: r.Name}))))
		}
	}
	return out
}
