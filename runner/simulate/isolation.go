package simulate

import (
	"fmt"

	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/runner/plan"
)

// isolationNote is what check --simulate says of gpu-isolation: the prediction's trials are
// MPS clients capped at their room, and it does not model their kernels overlapping.
func isolationNote(p *plan.Plan) string {
	mode := p.Config.GPUIsolation
	if mode == plan.IsolationNone || mode == "" || !p.NeedsGPU() {
		return ""
	}
	note := fmt.Sprintf("gpu-isolation: %s: each trial runs as a client of its GPU's MPS server, capped at its need and the margin "+
		"(%s), and where compute is modelled (--busy) the kernels of trials that share a GPU overlap", mode, mps.EnvLimit)
	if mode == plan.IsolationAuto {
		note += " (as they would where MPS can be had)"
	}
	if t := plan.MultiGPUTask(p.Tasks); t != nil {
		note += fmt.Sprintf("; task %q asks for %d GPUs, which runall's per-GPU MPS servers cannot serve: the run fails under mps "+
			"(unless a node's daemon answers at %s) and runs without MPS under auto", t.Name, t.GPU.Devices, mps.EnvPipe)
	}
	return note
}

// isolatedCompute turns the compute model's MPS on for every device under gpu-isolation: the
// run's trials would be MPS clients whose kernels overlap.
func isolatedCompute(c Compute, p *plan.Plan, devices int) Compute {
	if mode := p.Config.GPUIsolation; mode == plan.IsolationNone || mode == "" {
		return c
	}
	c.MPS = make([]bool, devices)
	for i := range c.MPS {
		c.MPS[i] = true
	}
	return c
}
