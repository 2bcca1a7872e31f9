package executor

import (
	"sync"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// Stop is a request that a running command end, and how it is then recorded.
type Stop struct {
	Status results.Status // the status the command ends with (pruned, failed, ...)
	Reason string         // why, as its result's reason says
}

// Handle is a trial while it runs, as far as stopping it goes: the process groups of its
// commands, and the stop asked of it. Safe for concurrent use.
type Handle struct {
	procs *proc.Table

	mu    sync.Mutex
	pgids []int
	stop  *Stop
	grace time.Duration
}

// NewHandle is a handle whose commands' process groups are in procs.
func NewHandle(procs *proc.Table) *Handle { return &Handle{procs: procs} }

// Stop asks the trial to end with st: SIGTERM to its process groups now, SIGKILL after
// grace; a command that starts later is stopped as it starts, and none is retried. It
// reports whether this was the first stop asked (a later one changes nothing).
func (h *Handle) Stop(st Stop, grace time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop != nil {
		return false
	}
	h.stop, h.grace = &st, grace
	for _, pgid := range h.pgids {
		h.procs.Terminate(pgid, grace)
	}
	return true
}

// Stopped is the stop asked of the trial; nil while none was.
func (h *Handle) Stopped() *Stop {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stop
}

// spawned ties a command's process group to the trial; one that starts after a stop was
// asked is stopped at once.
func (h *Handle) spawned(pgid int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pgids = append(h.pgids, pgid)
	if h.stop != nil {
		h.procs.Terminate(pgid, h.grace)
	}
}

// Stopper is what a consumer of the run's events is given to stop a running trial: issue
// a status of its own (pruned, say) and a reason.
type Stopper interface {
	// Stop asks the running trial t (or its running step) to end with status; false when
	// t does not run now or was already asked.
	Stop(t *plan.Task, status results.Status, reason string) bool
}

// Running is the run's trials that run now, by task: the run's Stopper.
type Running struct {
	grace time.Duration

	mu     sync.Mutex
	byTask map[*plan.Task]*Handle
}

// NewRunning is an empty table whose stops give commands grace between SIGTERM and SIGKILL.
func NewRunning(grace time.Duration) *Running {
	return &Running{grace: grace, byTask: map[*plan.Task]*Handle{}}
}

// Add records that t runs, under h; the returned func removes it when it ends.
func (r *Running) Add(t *plan.Task, h *Handle) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byTask[t] = h
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.byTask, t)
	}
}

// Stop asks t to end with status, with the run's grace period.
func (r *Running) Stop(t *plan.Task, status results.Status, reason string) bool {
	return r.StopWithin(t, Stop{Status: status, Reason: reason}, r.grace)
}

// StopWithin asks t to end as st, with grace between SIGTERM and SIGKILL.
func (r *Running) StopWithin(t *plan.Task, st Stop, grace time.Duration) bool {
	r.mu.Lock()
	h := r.byTask[t]
	r.mu.Unlock()
	if h == nil {
		return false
	}
	return h.Stop(st, grace)
}
