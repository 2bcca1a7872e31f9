package executor

import (
	"time"

	"github.com/runall/runall/runner/plan"
)

// Hung is a running attempt runall found hung and ended: unlike a Stop it ends the attempt
// alone, and the command decides what follows (its trial back to the line, to resume from
// its checkpoint; Hooks.Free: no retry spent).
type Hung struct {
	Attempt int    // the attempt it ended, as the trial counts them
	Reason  string // which sign stopped, when, and the rule's figures
	Dump    string // what its processes were doing: py-spy's dump, else their wait channels
}

// Hang ends the attempt that runs now as hung: SIGTERM to its process groups, SIGKILL
// after grace. It returns the process groups it signalled; none when a stop was asked
// already or the attempt was already found hung.
func (h *Handle) Hang(hu Hung, grace time.Duration) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop != nil || h.hung != nil && h.hung.Attempt == hu.Attempt {
		return nil
	}
	h.hung = &hu
	for _, pgid := range h.pgids {
		h.procs.Terminate(pgid, grace)
	}
	return append([]int(nil), h.pgids...)
}

// TakeHung is the hang found of the attempt that just ended, cleared; nil when none was.
func (h *Handle) TakeHung(attempt int) *Hung {
	h.mu.Lock()
	defer h.mu.Unlock()
	hu := h.hung
	if hu == nil || hu.Attempt != attempt {
		return nil
	}
	h.hung = nil
	return hu
}

// Hang ends running t's attempt as hung (Handle.Hang), with the run's grace; nil when t
// does not run now.
func (r *Running) Hang(t *plan.Task, hu Hung) []int {
	r.mu.Lock()
	h := r.byTask[t]
	r.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.Hang(hu, r.grace)
}

// Groups is the process groups of running t's commands; none when t does not run now.
func (r *Running) Groups(t *plan.Task) []int {
	r.mu.Lock()
	h := r.byTask[t]
	r.mu.Unlock()
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.pgids...)
}
