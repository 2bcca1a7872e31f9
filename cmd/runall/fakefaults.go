package main

import (
	"os"
	"time"

	"github.com/runall/runall/gpu/gpusim"
)

// armFakeFaults records, in the simulated GPUs' state, the faults their spec injects
// (`--fake-gpus 32GiB,32GiB:xid=79@30s`), due from now: the run's start. A run whose spec
// injects none clears those an earlier run left, so that each run's spec says what is
// faulty. `runall gpus` and the trials' fake-alloc read them from the state; only a run
// arms them. Nothing to do on real GPUs.
func armFakeFaults(a *app, fakeSpec string) error {
	if fakeSpec == "" {
		fakeSpec = a.getenv(gpusim.EnvGPUs)
	}
	if fakeSpec == "" {
		return nil
	}
	devs, err := gpusim.ParseSpec(fakeSpec)
	if err != nil {
		return usageError{"--fake-gpus: " + err.Error()}
	}
	faults, err := gpusim.ParseFaults(fakeSpec)
	if err != nil {
		return usageError{"--fake-gpus: " + err.Error()}
	}
	dir := a.getenv(gpusim.EnvState)
	if dir == "" {
		dir = gpusim.DefaultStateDir(os.TempDir())
	}
	return gpusim.ArmFaults(gpusim.Options{Devices: devs, StateDir: dir}, faults, time.Now())
}
