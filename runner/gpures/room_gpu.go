package gpures

import (
	"errors"
	"slices"
	"sync"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/framework"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/trial"
)

// GPURoom is a command's side of its trial's GPU placement: what its environment is told of
// its devices and need, and what the output of the attempt that runs now said of running out
// of GPU memory. An attempt that ran out sends its trial back to the line with a raised need.
// gpu-sharing: progress asks it to pause its trial (Pause) when the trial lowered its GPU.
type GPURoom struct {
	admit *admit.Admitter
	p     *admit.Placement
	t     *plan.Task // what the command runs (pbt: its variant): its env: and gpu: settings
	fw    *framework.Framework
	oom   bool      // the current attempt printed a GPU out-of-memory error
	said  admit.OOM // what its error messages said it held and tried to allocate

	mu  sync.Mutex
	now trial.Attempt // the attempt that runs now; nil before the first
}

// NewGPURoom is the room of a trial placed at p by the admitter, whose command runs as t
// (pbt: its variant) and tells the frameworks fw says.
func NewGPURoom(a *admit.Admitter, p *admit.Placement, t *plan.Task, fw *framework.Framework) *GPURoom {
	return &GPURoom{admit: a, p: p, t: t, fw: fw}
}

// Begin forgets what an earlier attempt said, tells the start event the devices, and keeps
// the attempt for Pause.
func (g *GPURoom) Begin(start *event.Event, a trial.Attempt) {
	g.oom, g.said = false, admit.OOM{}
	start.Devices, start.Need = g.p.UUIDs, g.p.Need
	g.mu.Lock()
	g.now = a
	g.mu.Unlock()
}

// Pause asks the attempt that runs now for its trial's pause (Attempt.Pause); false before
// its first attempt began.
func (g *GPURoom) Pause(reason string) bool {
	g.mu.Lock()
	a := g.now
	g.mu.Unlock()
	return a != nil && a.Pause(reason)
}

// Started ties an attempt's process group to the trial's placement.
func (g *GPURoom) Started(pgid int) { g.admit.Started(g.p, pgid) }

// Line reads a line of the attempt's output for an out-of-memory error.
func (g *GPURoom) Line(line string) {
	g.oom = g.oom || admit.IsOOM(line)
	g.said = g.said.Add(admit.ParseOOM(line))
}

// Ended has nothing to look at: the output said it.
func (g *GPURoom) Ended(proc.Outcome) {}

// Env tells the command its devices, its need and the frameworks' settings.
func (g *GPURoom) Env(env []string) []string {
	t, p := g.t, g.p
	own := func(name string) bool {
		return slices.ContainsFunc(t.Env, func(v plan.EnvVar) bool { return v.Name == name })
	}
	return g.fw.Env(env, g.admit.DeviceEnv(p), p.Need, p.Total, t.GPU.CapToNeed, own)
}

// Says nothing of its own: the exit says how it failed.
func (g *GPURoom) Says(proc.Outcome, bool) (cause, note string) { return "", "" }

// Failed is the admitter's answer to an attempt that printed an out-of-memory error: the
// need its trial goes again with, or that no need can fit (a GPU trial whose oom-retries are
// spent is retried or fails as any other).
func (g *GPURoom) Failed(f trial.Failure) trial.Answer {
	if !g.oom || f.Halted {
		return trial.Answer{}
	}
	need, requeues, err := g.admit.Requeue(g.p, g.said)
	switch {
	case err == nil:
		return trial.Answer{Class: failclass.OOM, Requeue: &trial.Requeue{Need: need, Requeues: requeues, Why: "out of GPU memory; requeued",
			Reason: admit.RequeueReason(need)}}
	case errors.Is(err, admit.ErrNeverFits):
		return trial.Answer{Fatal: err, Class: failclass.OOM} // no retry can help
	}
	return trial.Answer{Class: failclass.OOM}
}

// Detail tells the trial's result the GPU memory it ran with and the most it held.
func (g *GPURoom) Detail(d *event.Detail) {
	peak, source := g.admit.Peak(g.p)
	d.OnGPU, d.PeakGPUMemory, d.PeakGPUMemorySource = true, peak, string(source)
	d.GPUMemory = g.admit.Need(g.p) // a learned or raised need, settled to its peak
}
