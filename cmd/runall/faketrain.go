package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/internal/faketrain"
	"github.com/runall/runall/size"
)

const fakeTrainUsage = `Usage: runall fake-train --lr LR --width W [--epochs N] [--batches B] [--batch-time D]
                        [--checkpoint DIR] [--memory SIZE [--ramp D]]
                        [--hang-after N [--hang-print]] [--crash-at N] [--nan-from N]
                        [--slow-from N --slow-by F]

The demo's simulated trainer: what runall demo's trials run in place of a training script,
so that the demo needs no GPU and no Python. It prints what a small PyTorch script prints:
a tqdm bar over its batches on stderr, and at each epoch's end a Keras-style line on stdout
(loss, accuracy, val_loss, val_accuracy), which runall reads as the trial's metrics. Its
val_accuracy is a fixed function of --lr, --width and the epoch: the learning rate matters
most (best near 0.01; a large one leads early, then falls behind), a wider model does a
little better. With --checkpoint it saves each epoch there (then prints
runall-checkpoint step=N) and, when runall restored it (RUNALL_RESUMED=1), goes on after the
epoch it holds. With --memory it holds that much simulated GPU memory meanwhile, as
runall fake-alloc --size SIZE does (a trial on --fake-gpus).

Simulated faults, to see what runall does when a trial goes wrong. A step is a batch,
counted from the first batch of the first epoch, so that a run resumed from its
checkpoint meets the same fault at the same step again:
  --hang-after N   after step N, make no more progress until stopped: silently, or with
                   --hang-print a line each batch time (a script stuck printing retries)
  --crash-at N     at step N print a Python traceback on stderr and exit 1, every attempt
  --nan-from N     from the epoch that reaches step N, print loss and val_loss as nan
  --slow-from N    from step N each batch takes --slow-by F times as long (a slowdown
                   that is not a hang)

Flags:
`

func runFakeTrain(ctx context.Context, a *app, args []string) error {
	fs := newFlags(a, "fake-train", fakeTrainUsage)
	o := faketrain.Options{Stdout: a.stdout, Stderr: a.stderr}
	var memory string
	var ramp time.Duration
	fs.Float64Var(&o.LR, "lr", 0, "the learning rate `LR` (required)")
	fs.IntVar(&o.Width, "width", 0, "the model's width `W` (required)")
	fs.IntVar(&o.Epochs, "epochs", 8, "train `N` epochs")
	fs.IntVar(&o.Batches, "batches", 20, "`B` batches an epoch")
	fs.DurationVar(&o.BatchTime, "batch-time", 30*time.Millisecond, "a batch's time `D`")
	fs.StringVar(&o.Checkpoint, "checkpoint", "", "save each epoch to `DIR`, and resume from it when runall restored it")
	fs.StringVar(&memory, "memory", "", "hold `SIZE` of simulated GPU memory while it trains (as fake-alloc --size)")
	fs.DurationVar(&ramp, "ramp", 500*time.Millisecond, "with --memory: reach SIZE this long after the start, as fake-alloc's pytorch profile")
	faultFlags(fs, &o.Faults)
	if done, err := fs.parse(args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("fake-train: unexpected argument %q", fs.Arg(0))
	}
	if err := o.Validate(); err != nil {
		return usagef("fake-train: %v (--lr, --width, --epochs, --batches, --batch-time, the faults)", err)
	}
	o.Resume = a.getenv("RUNALL_RESUMED") == "1"
	if memory == "" {
		return faketrain.Run(ctx, o)
	}
	alloc := gpusim.AllocOptions{Ramp: ramp, Hold: 365 * 24 * time.Hour, Profile: gpusim.PyTorch, ReleaseLag: gpusim.DefaultReleaseLag}
	var err error
	if alloc.Size, err = size.Parse(memory); err != nil || alloc.Size == 0 {
		return usagef("fake-train: --memory %q: want a size such as 7GiB", memory)
	}
	if err := placeAlloc(a, "fake-train", &alloc, 0); err != nil {
		return err
	}
	return trainHolding(ctx, o, alloc)
}

// faultFlags are the flags of the simulated faults.
func faultFlags(fs *flags, f *faketrain.Faults) {
	fs.IntVar(&f.HangAfter, "hang-after", 0, "after step `N`, hang until stopped")
	fs.BoolVar(&f.HangPrint, "hang-print", false, "while hung, print a line each batch time")
	fs.IntVar(&f.CrashAt, "crash-at", 0, "at step `N`, print a traceback and exit 1 (every attempt)")
	fs.IntVar(&f.NaNFrom, "nan-from", 0, "from the epoch that reaches step `N`, print the losses as nan")
	fs.IntVar(&f.SlowFrom, "slow-from", 0, "from step `N`, take --slow-by times as long a batch")
	fs.Float64Var(&f.SlowBy, "slow-by", 3, "with --slow-from: the factor `F`")
}

// trainHolding trains while the memory of alloc is held: the memory ends with the training,
// and a step of it that does not fit (out of memory) ends the training, as it would the
// script's.
func trainHolding(ctx context.Context, o faketrain.Options, alloc gpusim.AllocOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	held := make(chan error, 1)
	go func() {
		err := gpusim.Alloc(ctx, alloc)
		cancel()
		held <- err
	}()
	err := faketrain.Run(ctx, o)
	cancel()
	aerr := <-held
	if errors.Is(aerr, context.Canceled) {
		aerr = nil
	}
	if aerr != nil {
		return aerr
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("fake-train: interrupted: %w", err)
	}
	return err
}
