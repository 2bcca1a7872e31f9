package gpures

import (
	"fmt"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/trial"
)

// Halving is on-oom as a trial's room asks it (oomhalve.go).
type Halving interface {
	// Halve decides that trial t, out of GPU memory where its need cannot grow, goes again
	// with its on-oom param halved from from: the value it goes with and how many halvings
	// that makes; ok is false where on-oom allows no more (times spent, min reached).
	Halve(t *plan.Task, from string) (to string, n int, ok bool)
}

// halvingRoom is a trial's GPU room with on-oom: where the GPU room's answer to an
// out-of-memory attempt is that its need cannot grow (it never fits, or its oom-retries are
// spent), the trial goes back to the line with its param halved instead, class oom, as
// often as on-oom allows; else the GPU room's answer stands.
type halvingRoom struct {
	gpu *GPURoom
	h   Halving
	t   *plan.Task // the trial
	run *plan.Task // what it runs as now: its param's value
}

// newHalvingRoom is g, the GPU room of trial t running as run, with t's on-oom; g itself
// when t has none.
func newHalvingRoom(g *GPURoom, h Halving, t, run *plan.Task) trial.Room {
	if plan.OnOOMOf(t) == nil || h == nil {
		return g
	}
	return &halvingRoom{gpu: g, h: h, t: t, run: run}
}

func (r *halvingRoom) Begin(start *event.Event, a trial.Attempt) { r.gpu.Begin(start, a) }
func (r *halvingRoom) Started(pgid int)                          { r.gpu.Started(pgid) }
func (r *halvingRoom) Line(line string)                          { r.gpu.Line(line) }
func (r *halvingRoom) Ended(out proc.Outcome)                    { r.gpu.Ended(out) }
func (r *halvingRoom) Env(env []string) []string                 { return r.gpu.Env(env) }
func (r *halvingRoom) Detail(d *event.Detail)                    { r.gpu.Detail(d) }
func (r *halvingRoom) Says(out proc.Outcome, stopped bool) (cause, note string) {
	return r.gpu.Says(out, stopped)
}

// Failed halves the trial's param where the GPU room cannot give it more room.
func (r *halvingRoom) Failed(f trial.Failure) trial.Answer {
	a := r.gpu.Failed(f)
	if a.Class != failclass.OOM || a.Requeue != nil || f.Halted {
		return a
	}
	o := plan.OnOOMOf(r.t)
	from := plan.ParamValue(r.run.Params, o.Halve)
	to, n, ok := r.h.Halve(r.t, from)
	if !ok {
		if a.Fatal != nil {
			a.Fatal = fmt.Errorf("%w; on-oom: %s=%s cannot be halved again (min %d, times %d)", a.Fatal, o.Halve, from, o.Min, o.Times)
		}
		return a
	}
	why := fmt.Sprintf("out of GPU memory with %s=%s; on-oom: requeued with %s=%s (halving %d of %d)", o.Halve, from, o.Halve, to, n, o.Times)
	return trial.Answer{Class: failclass.OOM, Requeue: &trial.Requeue{Need: r.gpu.p.Need, Why: why, Reason: why}}
}
