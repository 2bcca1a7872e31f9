package gpures

import (
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/trial"
)

// OutOfService is a GPU the run took out of service, and the fault that took it.
type OutOfService struct {
	Dev   int
	Fault gpu.Fault
	// Since is when the fault may have come: after the last health read that did not see
	// it. After a memory error no copy of a checkpoint kept since is trusted.
	Since time.Time
}

// GPUHealth is the GPUs' health as a trial's room asks it (health_trials.go).
type GPUHealth interface {
	// Out is the first of devs out of service, its health read now; ok is false when all
	// are in service.
	Out(devs []int) (o OutOfService, ok bool)
	// Watch calls out when one of devs is taken out of service, until cancel is called.
	Watch(devs []int, out func(OutOfService)) (cancel func())
	// Paused tells that the room asked trial t's pause: it is resumed once back, elsewhere.
	Paused(t *plan.Task)
	// RequeueFaulted reports whether the task may go back to the line once more after a
	// fault of its GPU, and counts it.
	RequeueFaulted(taskID int) bool
}

// healthRoom is a command's side of its GPUs' health. When the run takes one of them out
// of service as the attempt runs, the trial is paused at its next kept copy of its
// checkpoint (it goes on elsewhere, resumed from it); after a memory error (Xid 48, 94, 95,
// an uncorrectable ECC count), or without checkpoint:, its processes are stopped at once.
// An attempt the fault ended, or that was stopped so, goes back to the line, class
// gpu-fault, not counted against retries, as often as GPUHealth.RequeueFaulted allows.
type healthRoom struct {
	h GPUHealth
	p *admit.Placement
	t *plan.Task

	mu     sync.Mutex
	a      trial.Attempt
	pgid   int
	out    *OutOfService // what took its GPU out of service as the attempt ran
	cancel func()
}

// newHealthRoom is the room of trial t placed at p, on GPUs whose health h watches.
func newHealthRoom(h GPUHealth, p *admit.Placement, t *plan.Task) trial.Room {
	return &healthRoom{h: h, p: p, t: t}
}

// Begin forgets an earlier attempt's fault, and watches the attempt's GPUs.
func (r *healthRoom) Begin(_ *event.Event, a trial.Attempt) {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	r.a, r.pgid, r.out = a, 0, nil
	r.mu.Unlock()
	cancel := r.h.Watch(r.p.Devices, r.taken)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
}

// Started keeps the attempt's process group, which a fault may stop.
func (r *healthRoom) Started(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pgid = pgid
}

// taken acts on a GPU of the attempt taken out of service: a pause at its next copy where it
// may, else its processes stopped now (SIGKILL after a memory error: nothing more of it is
// to be trusted; SIGTERM otherwise).
func (r *healthRoom) taken(o OutOfService) {
	r.mu.Lock()
	if r.out != nil {
		r.mu.Unlock()
		return
	}
	r.out = &o
	a, pgid := r.a, r.pgid
	r.mu.Unlock()
	why := fmt.Sprintf("GPU%d out of service: %s", o.Dev, o.Fault)
	if !o.Fault.MemoryError() && a != nil && a.Pause(why) {
		r.h.Paused(r.t)
		return
	}
	sig := syscall.SIGTERM
	if o.Fault.MemoryError() {
		sig = syscall.SIGKILL
		distrust(a, o) // before the kill: the copy its end would keep is not kept
	}
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig) // it may have ended already
	}
}

// Line has nothing to read: the health read says what went wrong.
func (r *healthRoom) Line(string) {}

// Ended reads its GPUs' health now: a fault that ended its processes may be newer than the
// last read.
func (r *healthRoom) Ended(proc.Outcome) {
	r.mu.Lock()
	seen := r.out != nil
	r.pgid = 0 // its processes are gone: nothing to stop
	r.mu.Unlock()
	if seen {
		return
	}
	if o, ok := r.h.Out(r.p.Devices); ok {
		r.mu.Lock()
		r.out = &o
		a := r.a
		r.mu.Unlock()
		if o.Fault.MemoryError() {
			distrust(a, o) // the fault ended it before the watch read it: its last copies too
		}
	}
}

// distrust takes the attempt's trial back to the copy of its checkpoint kept before a
// memory error: what it computed after may be wrong (trial.Attempt.Distrust).
func distrust(a trial.Attempt, o OutOfService) {
	if a != nil {
		a.Distrust(o.Since)
	}
}

// Env adds nothing.
func (r *healthRoom) Env(env []string) []string { return env }

// Says adds the fault to a failure's reason.
func (r *healthRoom) Says(proc.Outcome, bool) (cause, note string) {
	if o := r.fault(); o != nil {
		return "", fmt.Sprintf("; GPU%d out of service: %s (NVIDIA: %s)", o.Dev, o.Fault, o.Fault.Resolution())
	}
	return "", ""
}

// Failed sends a trial a GPU fault ended back to the line with the need it had, class
// gpu-fault, as often as GPUHealth.RequeueFaulted allows; where the run halts, it is
// stopped, not failed.
func (r *healthRoom) Failed(f trial.Failure) trial.Answer {
	o := r.fault()
	if o == nil {
		return trial.Answer{}
	}
	why := fmt.Sprintf("GPU%d out of service (%s); requeued from its last checkpoint, not counted as a failure", o.Dev, o.Fault)
	if r.t.Checkpoint == nil {
		why = fmt.Sprintf("GPU%d out of service (%s); requeued from its start, not counted as a failure", o.Dev, o.Fault)
	}
	a := trial.Answer{Class: failclass.GPUFault, GPU: o.Fault.String(),
		Halted: fmt.Sprintf("GPU%d out of service (%s); not requeued: the run is stopping", o.Dev, o.Fault)}
	if !f.Halted && r.h.RequeueFaulted(r.t.ID) {
		a.Requeue = &trial.Requeue{Need: r.p.Need, Why: why, Reason: why}
	}
	return a
}

// Detail adds nothing (the GPU room tells the memory); the command ends, and its GPUs are
// no longer watched for it.
func (r *healthRoom) Detail(*event.Detail) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
		r.cancel = nil
	}
	r.pgid = 0
}

func (r *healthRoom) fault() *OutOfService {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out
}
