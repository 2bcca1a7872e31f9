package runner

import (
	"github.com/runall/runall/runner/gpures"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/hostres"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
)

// openResources are the run's resources, in the order admission asks them: host memory
// first (every command has a room in it: mem, the container's), then the GPUs when a task
// asks for GPU memory. A new resource is one more entry here.
func openResources(p *plan.Plan, opts Options, mem hostadmit.Reader, hist *history.History, pause *pauser) ([]resource.Resource, error) {
	gpu, err := gpures.Open(gpuOptions(p, opts, hist, pause))
	if err != nil {
		return nil, err
	}
	list := []resource.Resource{hostres.Open(p, mem, hist, gpu == nil)} // the GPUs' samples hold the container's memory
	if gpu != nil {
		list = append(list, gpu)
	}
	return list, nil
}

// gpuOptions are what the GPU resource is made of: the run's GPUs, its environment, its
// history of needs, and its pauser (nil: no trial has checkpoint:).
func gpuOptions(p *plan.Plan, opts Options, hist *history.History, pause *pauser) gpures.Options {
	o := gpures.Options{Plan: p, Probe: opts.Resources.Probe, ProbeErr: opts.Resources.ProbeErr,
		NoGPU: opts.Resources.NoGPU, Environ: opts.Environ, Hist: hist}
	if pause != nil {
		o.Pause = pause
	}
	return o
}
