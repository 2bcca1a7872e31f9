package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/size"
)

const fakeAllocUsage = `Usage: runall fake-alloc --size SIZE [--ramp DURATION] [--hold DURATION] [--profile NAME]
       runall fake-alloc --steps SIZE@TIME,... [--hold DURATION]
       runall fake-alloc --size SIZE --train-steps N --step-time D --busy F [--sm F]

Holds simulated GPU memory the way a training process holds real memory, so that GPU packing
can be tried and tested without a GPU. Run it as (part of) a trial's command when runall runs
with --fake-gpus; 'runall gpus' and runall's admission see its memory meanwhile.

SIZE is the most the process holds, as nvidia-smi would show it, context included. The
--profile lays it out over --ramp as a framework does:
  pytorch     the CUDA context (--context) 0.3 s after the start, the data in three steps,
              then a jump to SIZE at the end of the ramp (the optimizer's state) (default)
  tensorflow  the context, then growth in ten small steps (allow_growth)
  jax         the context, the data, then the compiled step's buffers (no preallocation)
  linear      no context: from 0 to SIZE in equal steps (the simulation's first profile)
--steps gives the totals and their times instead, e.g. 2GiB@1s,6GiB@2.5s,7.2GiB@3s. Memory
never shrinks before the end (the caching allocator keeps it), save for a --spike. It is
held for --hold after the last step; when the process ends, however it ends (SIGKILL too),
its memory stays counted for --release-lag, as a driver takes a while to free it.

A step that does not fit beside what else the GPU holds fails as the profile's framework
does (PyTorch's "CUDA out of memory. Tried to allocate ...", exit 1).

With --train-steps it then trains, holding its memory: N steps of --step-time each when
alone on its GPUs, of which the share --busy is the GPU computing (the rest: input, Python).
Beside other processes on a GPU its steps stretch as a real GPU's would: time-sliced, once
the busy shares add up to more than 1, in proportion, plus a switching cost per extra
process; with MPS on (a GPU spec's :mps), once the shares weighted by --sm (the share of the
SMs its kernels fill) exceed the GPU. It prints tqdm's progress bar to stderr as tqdm does
to a pipe, and ends after the last step (--hold after it, 0 unless given).

It reads the environment runall gives each trial on simulated GPUs:
  CUDA_VISIBLE_DEVICES   the trial's GPUs (UUIDs or indices); SIZE is claimed on each
  RUNALL_FAKE_GPUS       the simulated GPUs, e.g. 32GiB,16GiB
  RUNALL_FAKE_GPU_STATE  the directory holding the claims (default: $TMPDIR/runall-fake-gpus-<uid>)
Under gpu-isolation: mps it is a client of its GPU's simulated MPS server
(CUDA_MPS_PIPE_DIRECTORY): a step past CUDA_MPS_PINNED_DEVICE_MEM_LIMIT fails as PyTorch does,
and --mps-fault makes it cause a fatal fault that ends every client of that server.
Set them by hand to occupy memory "from outside", as another user would. See docs/gpu.md.

Flags:
`

func runFakeAlloc(ctx context.Context, a *app, args []string) error {
	fs := newFlags(a, "fake-alloc", fakeAllocUsage)
	var f fakeAllocFlags
	fs.StringVar(&f.size, "size", "", "hold at most `SIZE` on each of the trial's GPUs, e.g. 7GiB or 512MiB (this or --steps)")
	fs.DurationVar(&f.ramp, "ramp", 2*time.Second, "reach SIZE this long after the start (0: all at once)")
	fs.DurationVar(&f.hold, "hold", 10*time.Second, "hold the peak this long after the last step, then end and exit 0")
	fs.StringVar(&f.profile, "profile", "pytorch", "how memory grows to SIZE: pytorch, tensorflow, jax or linear")
	fs.StringVar(&f.context, "context", fmt.Sprintf("%dMiB", gpusim.DefaultContext>>20), "the CUDA context the framework profiles start with (`SIZE`)")
	fs.StringVar(&f.steps, "steps", "", "the process's totals over time instead of --size and --ramp: `SIZE@TIME,...`, e.g. 2GiB@1s,6GiB@2.5s")
	fs.StringVar(&f.spike, "spike", "", "a transient allocation above what is held: `SIZE@TIME+DURATION`, e.g. 2GiB@3s+500ms")
	fs.DurationVar(&f.mpsFault, "mps-fault", 0, "under MPS: cause a fatal GPU fault this long after the start, which takes every client of its server down")
	fs.DurationVar(&f.lag, "release-lag", gpusim.DefaultReleaseLag, "how long its memory stays counted after it ended (0: freed at once)")
	fs.IntVar(&f.train.Steps, "train-steps", 0, "after the ramp, train `N` steps holding the memory, printing tqdm's progress (0: none)")
	fs.DurationVar(&f.train.StepTime, "step-time", 100*time.Millisecond, "with --train-steps: a step's time `D` when alone on its GPUs")
	fs.Float64Var(&f.train.Busy, "busy", 1, "with --train-steps: the share `F` of a step the GPU computes (the rest is input and Python)")
	fs.Float64Var(&f.train.SM, "sm", 1, "with --train-steps: the share `F` of the SMs its kernels fill while they run (counts under MPS)")
	if done, err := fs.parse(args); done {
		return err
	}
	opts, err := f.options(fs.FlagSet)
	if err != nil {
		return err
	}

	if err := placeAlloc(a, "fake-alloc", &opts, f.mpsFault); err != nil {
		return err
	}
	err = gpusim.Alloc(ctx, opts)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("fake-alloc: interrupted, memory released: %w", err)
	}
	return err
}

// placeAlloc puts opts on the simulated GPUs runall gave the trial (cmd, fake-alloc or
// fake-train, is the command that says so when it gave none), from the environment.
func placeAlloc(a *app, cmd string, opts *gpusim.AllocOptions, mpsFault time.Duration) error {
	spec := a.getenv(gpusim.EnvGPUs)
	if spec == "" {
		return usagef("%s runs inside a trial that runall placed on --fake-gpus: %s is not set (to claim by hand, set %s=32GiB and %s=0 as docs/gpu.md shows)",
			cmd, gpusim.EnvGPUs, gpusim.EnvGPUs, gpu.EnvCUDAVisibleDevices)
	}
	devs, err := gpusim.ParseSpec(spec)
	if err != nil {
		return usagef("%s: %s: %v", cmd, gpusim.EnvGPUs, err)
	}
	devices := a.getenv(gpu.EnvCUDAVisibleDevices)
	if devices == "" {
		return usagef("%s runs inside a trial that runall placed on --fake-gpus: %s is not set, so there is no GPU to claim memory on (give its task a gpu-memory in the tasks file)",
			cmd, gpu.EnvCUDAVisibleDevices)
	}
	// Unset only when started by hand: the same default as runall's own --fake-gpus.
	state := a.getenv(gpusim.EnvState)
	if state == "" {
		state = gpusim.DefaultStateDir(os.TempDir())
	}
	opts.Devices, opts.GPUs, opts.StateDir, opts.Stderr = devices, devs, state, a.stderr
	opts.MPS, err = mpsClient(a, mpsFault)
	return err
}

// fakeAllocFlags are fake-alloc's flags as given.
type fakeAllocFlags struct {
	size, profile, context, steps, spike string
	ramp, hold, lag, mpsFault            time.Duration
	train                                gpusim.Train
}

// mpsClient reads the MPS variables runall gives a trial under gpu-isolation: mps: its
// server's pipe directory and its pinned memory limit.
func mpsClient(a *app, fault time.Duration) (gpusim.MPSClient, error) {
	c := gpusim.MPSClient{Pipe: a.getenv(mps.EnvPipe), FaultAfter: fault}
	if s := a.getenv(mps.EnvLimit); s != "" {
		limits, err := mps.ParseLimit(s)
		if err != nil {
			return c, usagef("fake-alloc: %v", err)
		}
		c.Limits = limits
	}
	if fault > 0 && c.Pipe == "" {
		return c, usagef("fake-alloc: --mps-fault needs an MPS server: run it in a trial under gpu-isolation: mps")
	}
	return c, nil
}

// options checks the flags and reads them into the simulation's options.
func (f fakeAllocFlags) options(fs *flag.FlagSet) (gpusim.AllocOptions, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var o gpusim.AllocOptions
	switch {
	case fs.NArg() > 0:
		return o, usagef("fake-alloc: unexpected argument %q", fs.Arg(0))
	case f.size == "" && f.steps == "":
		return o, usagef("fake-alloc: --size or --steps is required, e.g. --size 7GiB")
	case f.size != "" && f.steps != "":
		return o, usagef("fake-alloc: --size and --steps both say what the process holds: give one")
	case f.steps != "" && (set["ramp"] || set["profile"] || set["context"]):
		return o, usagef("fake-alloc: --ramp, --profile and --context lay out --size; with --steps, each step gives the total and its time")
	case f.ramp < 0 || f.hold < 0 || f.lag < 0:
		return o, usagef("fake-alloc: --ramp, --hold and --release-lag cannot be negative")
	}
	o.Ramp, o.Hold, o.ReleaseLag = f.ramp, f.hold, f.lag
	if err := f.training(set, &o); err != nil {
		return o, err
	}
	var err error
	if o.Profile, err = gpusim.ParseProfile(f.profile); err != nil {
		return o, usagef("fake-alloc: --profile: %v", err)
	}
	if o.Context, err = size.Parse(f.context); err != nil {
		return o, usagef("fake-alloc: --context: %v", err)
	}
	if set["context"] && o.Profile == gpusim.Linear {
		return o, usagef("fake-alloc: --profile linear has no context: drop --context, or pick pytorch, tensorflow or jax")
	}
	if f.size != "" {
		if o.Size, err = size.Parse(f.size); err != nil {
			return o, usagef("fake-alloc: --size: %v", err)
		}
		if o.Size == 0 {
			return o, usagef("fake-alloc: --size must be more than 0")
		}
	}
	if f.steps != "" {
		if o.Steps, err = gpusim.ParseSteps(f.steps); err != nil {
			return o, usagef("fake-alloc: --steps: %v", err)
		}
	}
	if f.spike != "" {
		if o.Spike, err = gpusim.ParseSpike(f.spike); err != nil {
			return o, usagef("fake-alloc: --spike: %v", err)
		}
	}
	return o, nil
}

// training reads the training flags into o: none of them without --train-steps, and the
// hold after the last step 0 unless given.
func (f fakeAllocFlags) training(set map[string]bool, o *gpusim.AllocOptions) error {
	if f.train.Steps == 0 {
		for _, name := range []string{"step-time", "busy", "sm"} {
			if set[name] {
				return usagef("fake-alloc: --%s is a training step's: give --train-steps N too", name)
			}
		}
		return nil
	}
	o.Train = f.train
	if err := o.Train.Validate(); err != nil {
		return usagef("fake-alloc: %v (--train-steps, --step-time, --busy, --sm)", err)
	}
	if !set["hold"] {
		o.Hold = 0
	}
	return nil
}
