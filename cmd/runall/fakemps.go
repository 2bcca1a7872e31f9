package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/internal/owned"
)

// The simulated MPS (gpu/gpusim/mpsd.go) is this binary under NVIDIA's names: run as
// nvidia-cuda-mps-control it is the control daemon and its client, as nvidia-cuda-mps-server
// the server. A run on simulated GPUs puts a link of that name first on PATH, as it puts
// runall there for fake-alloc.

// asMPS runs the simulated MPS when the program was started under one of its names; ok is
// false otherwise.
func asMPS(a *app, argv0 string, args []string) (code int, ok bool) {
	switch filepath.Base(argv0) {
	case mps.Binary:
		exe, err := os.Executable()
		if err != nil {
			return 1, true
		}
		return gpusim.MPSControl(args, a.stdin, a.stdout, a.stderr, a.getenv, []string{exe}), true
	case gpusim.MPSServerName:
		return gpusim.MPSServer(a.stdin), true
	}
	return 0, false
}

// mpsState is what MPS runall would have, and which daemon serves each GPU of uuids now:
// on simulated GPUs, the simulated daemon's.
func mpsState(a *app, fakeGPUs string, uuids []string) (mps.State, []mps.GPU, error) {
	env, fake := a.environ(), onFakeGPUs(a, fakeGPUs)
	done, err := withFakeMPSOnPath(&env, fake)
	if err != nil {
		return mps.State{}, nil, err
	}
	defer done()
	st := mps.Look(env)
	perGPU := mps.Find(env, uuids, st) // while the simulated control is on PATH and st names it
	if fake && !st.Answers {
		st.Control = "" // the link is gone once runall gpus ends
		st.Line = fmt.Sprintf("MPS: simulated (%s is runall itself on --fake-gpus): gpu-isolation: mps starts one control daemon per GPU for a run.", mps.Binary)
	}
	return st, perGPU, nil
}

// onFakeGPUs reports whether the run is on simulated GPUs (--fake-gpus or RUNALL_FAKE_GPUS).
func onFakeGPUs(a *app, flagValue string) bool {
	return flagValue != "" || a.getenv(gpusim.EnvGPUs) != ""
}

// withFakeMPSOnPath, when wanted, puts the simulated nvidia-cuda-mps-control first on PATH, through a link
// in a directory of its own that done removes: on simulated GPUs a real one must not answer.
func withFakeMPSOnPath(environ *[]string, wanted bool) (done func(), err error) {
	if !wanted {
		return func() {}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("gpu-isolation on simulated GPUs: %w", err)
	}
	dir, err := owned.Temp("runall-fake-mps-")
	if err != nil {
		return nil, fmt.Errorf("gpu-isolation on simulated GPUs: %w", err)
	}
	if err := dir.Symlink(exe, mps.Binary); err != nil {
		_ = dir.Close()
		return nil, fmt.Errorf("gpu-isolation on simulated GPUs: %w", err)
	}
	env := slices.Clone(*environ)
	path, _ := envlist.Lookup(env, "PATH")
	*environ = envlist.Set(env, "PATH", dir.Path()+string(filepath.ListSeparator)+path)
	return func() { _ = dir.Close() }, nil
}
