package runner

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/trial"
)

// ledger is the record of a run's tasks: each command's result, kept by the run's events
// alone (it is their first consumer). The parts of the run read a task's result from it
// (result, attempts), the run's end gathers them all (tasks), and so does the live report
// whenever it asks for the results so far; whether the run goes on is the lifecycle's
// (lifecycle.go).
type ledger struct {
	mask *mask.Masker

	mu       sync.Mutex
	byID     map[int]*results.Task // results of command tasks, by Task.ID
	byIDLive liveTasks             // what tasks that have not ended reported so far, by Task.ID
	paused   map[int]time.Time     // since when each paused task waits, by Task.ID
}

func newLedger(mask *mask.Masker) *ledger {
	return &ledger{mask: mask, byID: map[int]*results.Task{}, byIDLive: liveTasks{}, paused: map[int]time.Time{}}
}

// result is t's result so far.
func (l *ledger) result(t *plan.Task) results.Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	return *l.resultLocked(t)
}

// sofar is t's result as recorded so far, without recording t: before its first event, a
// pending result with no attempts.
func (l *ledger) sofar(t *plan.Task) results.Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	if res, ok := l.byID[t.ID]; ok {
		return *res
	}
	return results.Task{ID: t.ID, Name: t.Name, Status: results.StatusPending, ExitCode: -1}
}

func (l *ledger) resultLocked(t *plan.Task) *results.Task {
	res, ok := l.byID[t.ID]
	if !ok {
		res = &results.Task{ID: t.ID, Name: t.Name, Cmd: l.mask.Replace(t.Cmd), Status: results.StatusPending, ExitCode: -1, Params: paramsOf(t)}
		l.byID[t.ID] = res
	}
	return res
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
	l.byIDLive.take(ev)
	res := l.resultLocked(ev.Task)
	if since, ok := l.paused[res.ID]; ok && (ev.Kind == event.TaskStarted || ev.Kind == event.TaskSkipped || ev.Kind == event.TaskEnded && ev.End == event.EndFinal) {
		// Started again, ended or skipped: its wait is over.
		res.PausedSeconds += max(ev.Time.Sub(since), 0).Seconds()
		delete(l.paused, res.ID)
	}
	if ev.Kind == event.TaskEnded && ev.Try != nil {
		res.AttemptList = append(res.AttemptList, *ev.Try)
	}
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
		if ev.Detail != nil { // resumed: its starts from a kept checkpoint, this one's included
			res.Resumes = ev.Detail.Resumes
			if ev.Detail.Lineage != nil {
				res.Lineage = trial.MergeLineage(res.Lineage, ev.Detail.Lineage)
			}
		}
	case ev.Kind == event.TaskEnded && ev.End == event.EndRequeue:
		res.Status = results.StatusPending
		if ev.Requeues > 0 { // out of memory; a hung trial's or a GPU fault's requeue counts none
			res.OOMRequeues = ev.Requeues
		}
	case ev.Kind == event.TaskEnded && ev.End == event.EndPause:
		res.Status, res.Reason = results.StatusPaused, ev.Reason
		l.paused[res.ID] = ev.Time
		if ev.Detail != nil {
			recordDetail(res, ev.Detail) // what it did up to its pause, until it resumes
		}
	case ev.Kind == event.TaskEnded && ev.End == event.EndFinal:
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
	case ev.Kind == event.SyncProgress && ev.Reason != "": // its own upload failed
		res.UploadErrors = append(res.UploadErrors, ev.Reason)
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
	res.Resumes, res.Progress = d.Resumes, d.Progress
	if d.Lineage != nil {
		res.Lineage = trial.MergeLineage(res.Lineage, d.Lineage)
	}
}

// ending is what a task's final event says of it besides its status: how long it ran and
// its attempts, as recorded so far.
func (l *ledger) ending(t *plan.Task, now time.Time) (d time.Duration, attempts int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sofar := *l.resultLocked(t)
	sofar.FinishedAt = now
	d = sofar.Duration()
	if since, ok := l.paused[sofar.ID]; ok && d > 0 {
		d -= max(now.Sub(since), 0) // ended while paused
	}
	return d, sofar.Attempts
}

// statusOf is t's status as recorded so far.
func (l *ledger) statusOf(t *plan.Task) results.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resultLocked(t).Status
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
		out = append(out, endedWith(l.byIDLive.with(withLog(*tr, logFile(t)))))
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

// endedWith is r with a pbt trial's params the values it ended with (results.Task.EndedWith);
// r's maps are not changed, so the ledger keeps those it started with.
func endedWith(r results.Task) results.Task {
	r.EndedWith()
	return r
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
			out = append(out, endedWith(l.byIDLive.with(withLog(*r, logFile(&plan.Task{ID: r.ID, Name: r.Name})))))
		}
	}
	return out
}

// forecast keeps one decision of early-stop method forecast on t, for its record. Called
// on the pruner's goroutines.
func (l *ledger) forecast(t *plan.Task, f results.Forecast) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := l.resultLocked(t)
	res.Forecasts = append(res.Forecasts, f)
}
