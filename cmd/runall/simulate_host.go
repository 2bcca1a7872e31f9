package main

import (
	"fmt"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/simulate"
	"github.com/runall/runall/size"
)

// simulatedDevices are the GPUs check --simulate plans for. A plan with no GPU needs (host
// needs alone, say) is simulated without any.
func simulatedDevices(a *app, p *plan.Plan, f simulateFlags) ([]gpu.Device, error) {
	probe, err := openProbe(a, f.fakeGPUs)
	if err != nil {
		if !p.NeedsGPU() {
			return nil, nil
		}
		return nil, fmt.Errorf("check --simulate needs the GPUs to plan for: %w (pass --fake-gpus, e.g. 2x32GiB)", err)
	}
	devs, err := probe.Devices()
	probe.Close()
	if err != nil {
		return nil, fmt.Errorf("check --simulate: %w", err)
	}
	return devs, nil
}

// simulatedHostLimit is the container memory limit memory: needs are packed into: the
// flag's, else this container's when one applies; 0 (not modelled) for a plan without host
// needs, or where no limit is known.
func simulatedHostLimit(p *plan.Plan, flagValue string) (uint64, error) {
	if flagValue != "" {
		n, err := size.Parse(flagValue)
		if err != nil || n == 0 {
			return 0, usagef("--memory-limit: want a size such as 16GiB, got %q", flagValue)
		}
		return n, nil
	}
	if !p.NeedsHost() {
		return 0, nil
	}
	m, err := hostmem.Open("").Read()
	if err != nil || !m.Limited {
		return 0, nil
	}
	return m.Limit, nil
}

// simulatedCompute is how the simulation slows trials that share a GPU: --busy, and MPS on
// the simulated GPUs whose spec says :mps (NVML's GPUs are taken as time-sliced).
func simulatedCompute(a *app, f simulateFlags) (simulate.Compute, error) {
	if f.busy == 0 {
		return simulate.Compute{}, nil
	}
	if !(f.busy > 0 && f.busy <= 1) {
		return simulate.Compute{}, usagef("--busy: want the share of a trial's time the GPU computes, from 0 (excluded) to 1, got %v", f.busy)
	}
	c := simulate.Compute{Busy: f.busy}
	spec := f.fakeGPUs
	if spec == "" {
		spec = a.getenv(gpusim.EnvGPUs)
	}
	if spec != "" {
		devs, err := gpusim.ParseSpec(spec)
		if err != nil {
			return c, usagef("--fake-gpus: %v", err)
		}
		for _, d := range devs {
			c.MPS = append(c.MPS, d.MPS)
		}
	}
	return c, nil
}
