package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/runall/runall/gpu"
)

const fakeAllocUsage = `Usage: runall fake-alloc --size SIZE [--ramp DURATION] [--hold DURATION]

Claims simulated GPU memory the way a training process allocates real memory, so that GPU
packing can be tried and tested without a GPU. Run it as (part of) a trial's command when
runall runs with --fake-gpus: the claim grows from 0 to SIZE over --ramp, is held for --hold,
then released, and 'runall gpus' and runall's admission see it meanwhile. A claim that does
not fit next to the others fails like PyTorch does ("CUDA out of memory", exit 1). SIGINT or
SIGTERM releases the claim; if the process is killed outright, the claim vanishes with it.

It reads the environment runall gives each trial on simulated GPUs:
  CUDA_VISIBLE_DEVICES   the trial's GPUs (UUIDs or indices); SIZE is claimed on each
  RUNALL_FAKE_GPUS       the simulated GPUs' sizes, e.g. 32GiB,16GiB
  RUNALL_FAKE_GPU_STATE  the directory holding the claims (default: $TMPDIR/runall-fake-gpus-<uid>)
Set them by hand to occupy memory "from outside", as another user would. See docs/gpu.md.

Flags:
`

func runFakeAlloc(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("fake-alloc", flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	size := fs.String("size", "", "claim `SIZE` on each of the trial's GPUs, e.g. 7GiB or 512MiB (required)")
	ramp := fs.Duration("ramp", 2*time.Second, "grow the claim linearly from 0 to SIZE over this long (0: all at once)")
	hold := fs.Duration("hold", 10*time.Second, "hold the full claim this long, then release it and exit 0")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), fakeAllocUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errSilentUsage
	}
	switch {
	case fs.NArg() > 0:
		return usagef("fake-alloc: unexpected argument %q", fs.Arg(0))
	case *size == "":
		return usagef("fake-alloc: --size is required, e.g. --size 7GiB")
	case *ramp < 0 || *hold < 0:
		return usagef("fake-alloc: --ramp and --hold cannot be negative")
	}
	bytes, err := gpu.ParseSize(*size)
	if err != nil {
		return usagef("fake-alloc: --size: %v", err)
	}
	if bytes == 0 {
		return usagef("fake-alloc: --size must be more than 0")
	}

	spec := a.getenv(gpu.EnvFakeGPUs)
	if spec == "" {
		return usagef("fake-alloc runs inside a trial that runall placed on --fake-gpus: %s is not set (to claim by hand, set %s=32GiB and %s=0 as docs/gpu.md shows)",
			gpu.EnvFakeGPUs, gpu.EnvFakeGPUs, gpu.EnvCUDAVisibleDevices)
	}
	sizes, err := gpu.ParseFakeSpec(spec)
	if err != nil {
		return usagef("fake-alloc: %s: %v", gpu.EnvFakeGPUs, err)
	}
	devices := a.getenv(gpu.EnvCUDAVisibleDevices)
	if devices == "" {
		return usagef("fake-alloc runs inside a trial that runall placed on --fake-gpus: %s is not set, so there is no GPU to claim memory on (give its task a gpu-memory in the tasks file)",
			gpu.EnvCUDAVisibleDevices)
	}
	// Unset only when started by hand: the same default as runall's own --fake-gpus.
	state := a.getenv(gpu.EnvFakeGPUState)
	if state == "" {
		state = gpu.DefaultFakeStateDir(os.TempDir())
	}

	err = gpu.FakeAlloc(ctx, gpu.FakeAllocOptions{
		Size: bytes, Ramp: *ramp, Hold: *hold,
		Devices: devices, Sizes: sizes, StateDir: state,
		Stderr: a.stderr,
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("fake-alloc: interrupted, claim released: %w", err)
	}
	return err
}
