package main

import (
	"fmt"
	"github.com/runall/runall/size"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/plan"
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
