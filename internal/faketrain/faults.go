package faketrain

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"
)

// Faults are the ways a simulated training run goes wrong, so that what runall does about a
// trial that hangs, crashes, diverges or slows down is tested with no GPU and no Python. A
// step is a batch, counted from the run's first (epoch e's batch b is step (e-1)*Batches+b),
// so that a run resumed from its checkpoint meets a fault at the same step again. Zero: none.
type Faults struct {
	HangAfter int  // after this step it stops making progress, until it is stopped
	HangPrint bool // while hung it prints a line each batch time, as a script stuck in a retry loop does
	CrashAt   int  // at this step it fails (a traceback on stderr, exit 1), on every attempt
	NaNFrom   int  // from the epoch that reaches this step, loss and val_loss are nan
	SlowFrom  int  // from this step each batch takes SlowBy times as long
	SlowBy    float64
}

// Validate says what is wrong with f, if anything.
func (f Faults) Validate() error {
	switch {
	case f.HangAfter < 0 || f.CrashAt < 0 || f.NaNFrom < 0 || f.SlowFrom < 0:
		return fmt.Errorf("a fault's step cannot be negative")
	case f.HangPrint && f.HangAfter == 0:
		return fmt.Errorf("printing while hung needs a step to hang after")
	case f.SlowFrom > 0 && !(f.SlowBy >= 1):
		return fmt.Errorf("slowing from step %d by %v: want a factor of 1 or more, such as 3", f.SlowFrom, f.SlowBy)
	}
	return nil
}

// batchTime is how long step takes: d, or d times SlowBy from SlowFrom.
func (f Faults) batchTime(step int, d time.Duration) time.Duration {
	if f.SlowFrom > 0 && step >= f.SlowFrom {
		return time.Duration(float64(d) * f.SlowBy)
	}
	return d
}

// crash is the error of a run that crashes at step, after the traceback a PyTorch script
// prints on w; nil when it does not crash there.
func (f Faults) crash(step int, w io.Writer) error {
	if f.CrashAt == 0 || step != f.CrashAt {
		return nil
	}
	fmt.Fprintf(w, "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n")
	fmt.Fprintf(w, "RuntimeError: simulated crash at step %d\n", step)
	return fmt.Errorf("simulated crash at step %d", step)
}

// diverged reports whether the epoch that ends at step reports nan losses.
func (f Faults) diverged(step int) bool { return f.NaNFrom > 0 && step >= f.NaNFrom }

// hang waits, after step, until ctx ends when the run hangs there, printing a line on w each
// tick with HangPrint; it returns ctx's error then, nil when it does not hang.
func (f Faults) hang(ctx context.Context, step int, tick time.Duration, w io.Writer) error {
	if f.HangAfter == 0 || step != f.HangAfter {
		return nil
	}
	if !f.HangPrint {
		<-ctx.Done()
		return ctx.Err()
	}
	for n := 1; ; n++ {
		if err := sleep(ctx, max(tick, 10*time.Millisecond)); err != nil {
			return err
		}
		fmt.Fprintf(w, "waiting for the data loader's workers (%d)\n", n)
	}
}

// epochLoss is what the epoch line prints of m's losses: nan once the run diverged.
func (f Faults) epochLoss(m Epoch, step int) Epoch {
	if f.diverged(step) {
		m.Loss, m.ValLoss = math.NaN(), math.NaN()
	}
	return m
}
