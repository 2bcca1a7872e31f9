package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/internal/owned"
	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/plan"
)

// openGPUs sets what the run's trials find of the GPUs and runall: runall on their PATH (for
// fake-alloc), the GPU probe, and on simulated GPUs under gpu-isolation the simulated MPS
// control first on PATH. close undoes it once the run has ended.
func (o *runOptions) openGPUs(a *app, p *plan.Plan, opts *runner.Options) (close func(), err error) {
	env, unlink := withSelfOnPath(a.environ())
	closers := []func(){unlink}
	close = func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	opts.Environ = env
	if !o.noGPU && p.NeedsGPU() {
		opts.Resources.Probe, opts.Resources.ProbeErr = openProbe(a, o.fakeGPUs)
		if probe := opts.Resources.Probe; probe != nil {
			closers = append(closers, func() { _ = probe.Close() })
		}
		if opts.Resources.Probe != nil {
			if err := armFakeFaults(a, o.fakeGPUs); err != nil { // fakefaults.go
				close()
				return nil, err
			}
		}
	}
	doneMPS, err := withFakeMPSOnPath(&opts.Environ, onFakeGPUs(a, o.fakeGPUs) && p.Config.GPUIsolation != plan.IsolationNone)
	if err != nil {
		close()
		return nil, err
	}
	closers = append(closers, doneMPS)
	return close, nil
}

// withSelfOnPath appends runall's own directory to PATH when no runall is on it, so that
// tasks can call `runall fake-alloc` (the demo does) wherever the binary was built. A binary
// under another name (runall-linux-amd64, say) is put on PATH as runall through a link in a
// directory of its own, which done removes.
func withSelfOnPath(environ []string) (env []string, done func()) {
	done = func() {}
	exe, err := os.Executable()
	if err != nil {
		return environ, done
	}
	path, _ := envlist.Lookup(environ, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, "runall")); err == nil && !fi.IsDir() {
			return environ, done
		}
	}
	dir := filepath.Dir(exe)
	if filepath.Base(exe) != "runall" {
		link, err := owned.Temp("runall-bin-")
		if err != nil {
			return environ, done
		}
		if link.Symlink(exe, "runall") != nil {
			_ = link.Close()
			return environ, done
		}
		dir, done = link.Path(), func() { _ = link.Close() }
	}
	env = slices.Clone(environ)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = kv + string(filepath.ListSeparator) + dir
			return env, done
		}
	}
	return append(env, "PATH="+dir), done
}
