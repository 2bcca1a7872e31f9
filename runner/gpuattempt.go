package runner

import (
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
)

// gpuAttempt is a command's side of its trial's GPU placement: its room (nil without one),
// and what the output of the attempt that runs now said of running out of GPU memory.
type gpuAttempt struct {
	admit *admit.Admitter
	p     *admit.Placement
	oom   bool      // the current attempt printed a GPU out-of-memory error
	said  admit.OOM // what its error messages said it held and tried to allocate
	mps   mpsAttempt
}

// restart forgets what an earlier attempt said.
func (g *gpuAttempt) restart() { g.oom, g.said, g.mps.fault = false, admit.OOM{}, nil }

// started ties an attempt's process group to the trial's placement.
func (g *gpuAttempt) started(pgid int) {
	if g.p != nil {
		g.admit.Started(g.p, pgid)
	}
	g.mps.pgid = pgid
}

// line reads a line of the attempt's output for an out-of-memory error.
func (g *gpuAttempt) line(line string) {
	if g.p != nil {
		g.oom = g.oom || admit.IsOOM(line)
		g.said = g.said.Add(admit.ParseOOM(line))
	}
}

// ranOut reports whether the attempt, placed on GPUs, printed an out-of-memory error.
func (g *gpuAttempt) ranOut() bool { return g.p != nil && g.oom }

// requeue is the admitter's answer to an attempt that ran out: the need its trial goes
// again with, or why it cannot.
func (g *gpuAttempt) requeue() (need uint64, requeues int, err error) {
	return g.admit.Requeue(g.p, g.said)
}

// detail tells the trial's result the GPU memory it ran with and the most it held.
func (g *gpuAttempt) detail(d *event.Detail) {
	if g.p != nil {
		peak, source := g.admit.Peak(g.p)
		d.OnGPU, d.PeakGPUMemory, d.PeakGPUMemorySource = true, peak, string(source)
		d.GPUMemory = g.admit.Need(g.p) // a learned or raised need, settled to its peak
	}
}
