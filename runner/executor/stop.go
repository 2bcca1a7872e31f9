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
	// Status is the status the command ends with (pruned, failed, ...); StatusPending sends
	// its trial back to the line instead (its claim was lost: not the trial's failure).
	Status results.Status
	Reason string // why, as its result's reason says
}

// Handle is a trial while it runs, as far as stopping it goes: the process groups of its
// commands, and the stop asked of it. Safe for concurrent use.
type Handle struct {
	procs *proc.Table

	mu    sync.Mutex
	pgids []int
	stop  *Stop
	grace time.Duration
	await *Awaited // a stop asked for later
	hung  *Hung    // the running attempt found hung (hang.go)
}

// Awaited is a stop asked of a trial for later, once its checkpoint holds step At (a pause
// at a round): a trial that ends on its own first, with a copy of At or later kept, ends as
// Stop all the same, not as if it ran on unasked.
type Awaited struct {
	Stop
	At int
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

// Await records a stop asked of the trial for later (see Awaited); the first one stays.
func (h *Handle) Await(a Awaited) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.await == nil {
		h.await = &a
	}
}

// Awaiting is the stop asked of the trial for later; nil when none was.
func (h *Handle) Awaiting() *Awaited {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.await
}

// Stopped is the stop asked of the trial; nil while none was.
func (h *Handle) Stopped() *Stop {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stop
}

// Groups are the process groups of the trial's commands so far.
func (h *Handle) Groups() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.pgids...)
}

// Terminate sends SIGTERM to the trial's process groups and SIGKILL after grace, asking no
// stop of it: it ends as any trial that a signal to runall stopped.
func (h *Handle) Terminate(grace time.Duration) {
	for _, pgid := range h.Groups() {
		h.procs.Terminate(pgid, grace)
	}
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
	early  map[*plan.Task]early // stops asked before the trial ran (StopAtStart)
}

// early is a stop asked of a trial that did not run yet.
type early struct {
	st    Stop
	grace time.Duration
}

// NewRunning is an empty table whose stops give commands grace between SIGTERM and SIGKILL.
func NewRunning(grace time.Duration) *Running {
	return &Running{grace: grace, byTask: map[*plan.Task]*Handle{}, early: map[*plan.Task]early{}}
}

// Add records that t runs, under h; the returned func removes it when it ends. A stop
// asked of t before it ran (StopAtStart) is asked of h now.
func (r *Running) Add(t *plan.Task, h *Handle) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byTask[t] = h
	if e, ok := r.early[t]; ok {
		h.Stop(e.st, e.grace)
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.byTask, t)
	}
}

// Each is a snapshot of the running trials and their handles (a trial's steps share its
// handle, and are listed under their own task as well).
func (r *Running) Each() map[*plan.Task]*Handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[*plan.Task]*Handle, len(r.byTask))
	for t, h := range r.byTask {
		out[t] = h
	}
	return out
}

// Stop asks t to end with status, with the run's grace period.
func (r *Running) Stop(t *plan.Task, status results.Status, reason string) bool {
	return r.StopWithin(t, Stop{Status: status, Reason: reason}, r.grace)
}

// StopAtStart asks t to end as st now, or as it starts when it does not run yet, until
// Forget(t): a claim lost between its trial's admission and its start stops it as it starts.
func (r *Running) StopAtStart(t *plan.Task, st Stop, grace time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.early[t] = early{st, grace}
	if h := r.byTask[t]; h != nil {
		h.Stop(st, grace)
	}
}

// Forget drops a stop StopAtStart asked of t.
func (r *Running) Forget(t *plan.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.early, t)
}

// Await asks running t to end as a.Stop once its checkpoint holds step a.At (Awaited);
// false when t does not run now.
func (r *Running) Await(t *plan.Task, a Awaited) bool {
	r.mu.Lock()
	h := r.byTask[t]
	r.mu.Unlock()
	if h != nil {
		h.Await(a)
	}
	return h != nil
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
