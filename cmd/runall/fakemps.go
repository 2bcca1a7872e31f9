package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/gpu/mps"
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

// onFakeGPUs reports whether the run is on simulated GPUs (--fake-gpus or RUNALL_FAKE_GPUS).
func onFakeGPUs(a *app, flagValue string) bool {
	return flagValue != "" || a.getenv(gpusim.EnvGPUs) != ""
}

// withFakeMPSOnPath puts the simulated nvidia-cuda-mps-control first on PATH, through a link
// in a directory of its own that done removes: on simulated GPUs a real one must not answer.
func withFakeMPSOnPath(environ []string) (env []string, done func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return environ, func() {}, err
	}
	dir, err := owned.Temp("runall-fake-mps-")
	if err != nil {
		return environ, func() {}, err
	}
	if err := dir.Symlink(exe, mps.Binary); err != nil {
		_ = dir.Close()
		return environ, func() {}, err
	}
	env = slices.Clone(environ)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + dir.Path() + string(filepath.ListSeparator) + strings.TrimPrefix(kv, "PATH=")
			return env, func() { _ = dir.Close() }, nil
		}
	}
	return append(env, "PATH="+dir.Path()), func() { _ = dir.Close() }, nil
}
