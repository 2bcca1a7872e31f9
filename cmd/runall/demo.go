package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runall/runall/internal/outfile"
)

//go:embed demo.yml
var demoFile []byte

const demoUsage = `Usage: runall demo [flags]

Demo runs the built-in demo: a setup step, then two sweeps over a learning rate and a
width (a grid run to the end, then a random search under early stopping, asha), packed onto
two simulated 32 GiB GPUs by measured free memory (--fake-gpus %s unless
you give --fake-gpus or RUNALL_FAKE_GPUS: the driver keeps 512 MiB of each). Each trial runs
runall fake-train, the demo's simulated trainer: a tqdm bar and Keras's epoch lines, which
runall reads as its metrics, a checkpoint each epoch, and its GPU memory held as a PyTorch
process holds it. It needs no GPU.

While it runs it serves its live page at the address its first line gives: --serve %s
(a free port), also for a --serve without an address, unless you give one or RUNALL_SERVE;
--serve '' serves nothing. Its last line names the report.html it wrote. Each run starts
its trials over (--fresh). Its file is written to %s in the current
directory, the same path each time, so that a second run shows how long each trial has
left from the first one's times.

It takes the flags of runall run:
`

// demoGPUs are the demo's simulated GPUs: two of 32 GiB, each with the share of memory a
// driver keeps and no process holds.
const demoGPUs = "2x32GiB:reserve=512MiB"

// demoServe is where the demo serves its live page: loopback, at a port free now.
const demoServe = "127.0.0.1:0"

// demoPath is where the demo's file goes: a fixed path under the default log directory's
// parent, so that the history (the ETA) of one run serves the next and runs leave no file
// each.
const demoPath = ".runall/demo/demo.yml"

// runDemo runs the embedded demo on demoGPUs, unless told otherwise: the
// quickest way to see what runall is for, on a laptop.
func runDemo(ctx context.Context, a *app, args []string) error {
	if wantsHelp(args) {
		fs := newFlags(a, "demo", fmt.Sprintf(demoUsage, demoGPUs, demoServe, demoPath))
		new(runOptions).flags(fs.FlagSet)
		fs.printHelp()
		return nil
	}
	if err := writeDemo(demoPath); err != nil {
		return fmt.Errorf("demo: cannot write its tasks file: %w (run it from a directory you can write to)", err)
	}
	args = bareServe(args)
	if !hasFlag(args, "fake-gpus") && a.getenv("RUNALL_FAKE_GPUS") == "" {
		args = append([]string{"--fake-gpus", demoGPUs}, args...)
	}
	if !hasFlag(args, "serve", "metrics-addr") && a.getenv("RUNALL_SERVE") == "" {
		args = append([]string{"--serve", demoServe}, args...)
	}
	// Its trials keep checkpoints: a second run would resume each from its last epoch and
	// show nothing train. Each run trains again (prepended, --fresh=false still wins).
	args = append([]string{"--fresh"}, args...)
	return runRun(ctx, a, append(args, demoPath))
}

// bareServe gives a --serve without an address (the last argument, or one before another
// flag) demoServe's, so that runall demo --serve does what it says, where the flag package
// would take the next flag for the address.
func bareServe(args []string) []string {
	for i, s := range args {
		if (s == "--serve" || s == "-serve") && (i == len(args)-1 || strings.HasPrefix(args[i+1], "-")) {
			return slices.Concat(args[:i+1], []string{demoServe}, args[i+1:])
		}
	}
	return args
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

// hasFlag reports whether args give one of the flags named, as -name, --name or with =VALUE.
func hasFlag(args []string, names ...string) bool {
	return slices.ContainsFunc(args, func(s string) bool {
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-"), "=")
		return strings.HasPrefix(s, "-") && slices.Contains(names, name)
	})
}
