package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/runall/runall/internal/outfile"
)

//go:embed demo.yml
var demoFile []byte

const demoUsage = `Usage: runall demo [flags]

Demo runs the built-in demo: a setup step, then a sweep of 12 trials needing 3-12 GiB each,
packed onto two simulated 32 GiB GPUs by measured free memory (--fake-gpus
%s unless you give --fake-gpus or RUNALL_FAKE_GPUS: the driver keeps
512 MiB of each). Each trial holds its memory with runall fake-alloc, as a PyTorch process
would: its CUDA context, then its data in steps, its peak held to the end and freed a second
after it. It needs no GPU. Its file is written to %s in the current
directory, the same path each time, so that a second run shows how long each trial has
left from the first one's times.

It takes the flags of runall run:
`

// demoGPUs are the demo's simulated GPUs: two of 32 GiB, each with the share of memory a
// driver keeps and no process holds.
const demoGPUs = "2x32GiB:reserve=512MiB"

// demoPath is where the demo's file goes: a fixed path under the default log directory's
// parent, so that the history (the ETA) of one run serves the next and runs leave no file
// each.
const demoPath = ".runall/demo/demo.yml"

// runDemo runs the embedded demo on demoGPUs, unless told otherwise: the
// quickest way to see what runall is for, on a laptop.
func runDemo(ctx context.Context, a *app, args []string) error {
	if wantsHelp(args) {
		fs := newFlags(a, "demo", fmt.Sprintf(demoUsage, demoGPUs, demoPath))
		new(runOptions).flags(fs.FlagSet)
		fs.printHelp()
		return nil
	}
	if err := writeDemo(demoPath); err != nil {
		return fmt.Errorf("demo: cannot write its tasks file: %w (run it from a directory you can write to)", err)
	}
	if !slices.ContainsFunc(args, func(s string) bool { return s == "--fake-gpus" || s == "-fake-gpus" }) &&
		a.getenv("RUNALL_FAKE_GPUS") == "" {
		args = append([]string{"--fake-gpus", demoGPUs}, args...)
	}
	return runRun(ctx, a, append(args, demoPath))
}

// writeDemo writes the demo's file at path unless it is there already as it should be.
func writeDemo(path string) error {
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, demoFile) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return outfile.WriteFile(path, demoFile)
}
