package runner

import (
	"github.com/runall/runall/runner/gpures"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/hostres"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/runner/resource"
)

// resourceRun is what of the run its resources reach: its pauser (nil: no trial has
// checkpoint:), its failing (every GPU out of service ends the run), Prometheus (nil
// without --serve), and its checkpoints (nil: no trial sets one).
type resourceRun struct {
	pause *pauser
	fail  func(why string)
	met   *prom.Metrics
	ckpts *checkpoints
}

// openResources are the run's resources, in the order admission asks them: host memory
// first (every command has a room in it: mem, the container's), then the GPUs when a task
// asks for GPU memory. A new resource is one more entry here.
func openResources(p *plan.Plan, opts Options, mem hostadmit.Reader, hist *history.History, run resourceRun) ([]resource.Resource, error) {
	gpu, err := gpures.Open(gpuOptions(p, opts, hist, run))
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
// history of needs, and what of the run it reaches (run).
func gpuOptions(p *plan.Plan, opts Options, hist *history.History, run resourceRun) gpures.Options {
	o := gpures.Options{Plan: p, Probe: opts.Resources.Probe, ProbeErr: opts.Resources.ProbeErr,
		NoGPU: opts.Resources.NoGPU, Environ: opts.Environ, Hist: hist, Fail: run.fail, Met: run.met}
	if run.pause != nil {
		o.Pause = run.pause
	}
	if run.ckpts != nil {
		o.Drop = run.ckpts
	}
	return o
}
