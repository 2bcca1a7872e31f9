package faketrain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/internal/outfile"
)

// Options are a simulated training run's hyperparameters, its length and where it saves.
type Options struct {
	LR        float64
	Width     int
	Epochs    int
	Batches   int           // batches an epoch
	BatchTime time.Duration // a batch's time
	// Checkpoint is the directory it saves its epoch to after each one, and resumes from
	// when Resume is set ("": it saves nothing).
	Checkpoint string
	Resume     bool // RUNALL_RESUMED: go on after the epoch Checkpoint holds
	Faults     Faults
	Stdout     io.Writer
	Stderr     io.Writer // the tqdm bar
}

// ckptFile is the checkpoint's one file, in Options.Checkpoint.
const ckptFile = "model.ckpt"

// Validate says what is wrong with o, if anything.
func (o Options) Validate() error {
	switch {
	case !(o.LR > 0):
		return fmt.Errorf("learning rate %v: want more than 0, such as 0.001", o.LR)
	case o.Width < 1:
		return fmt.Errorf("width %d: want 1 or more, such as 256", o.Width)
	case o.Epochs < 1 || o.Batches < 1:
		return fmt.Errorf("%d epochs of %d batches: want 1 or more of each", o.Epochs, o.Batches)
	case o.BatchTime < 0:
		return fmt.Errorf("batch time %v: cannot be negative", o.BatchTime)
	}
	return o.Faults.Validate()
}

// Run trains: each epoch's batches advance a tqdm bar over the whole run on Stderr, then
// "Epoch e/N" and Keras' verbose=2 line of the epoch's metrics go to Stdout, and the epoch
// is saved to Checkpoint (followed by runall-checkpoint step=e, so that runall copies it at
// once). With Resume, it starts after the epoch its checkpoint holds, as a script that
// restores its weights does. It ends at ctx's end with ctx's error.
func Run(ctx context.Context, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	done := 0
	if o.Resume && o.Checkpoint != "" {
		var err error
		if done, err = restore(o.Checkpoint); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "restored epoch %d from %s\n", done, filepath.Join(o.Checkpoint, ckptFile))
		if done >= o.Epochs {
			return nil // trained already: a bar of no batches would say nothing
		}
	}
	bar := gpusim.NewProgress(o.Stderr, (o.Epochs-done)*o.Batches, time.Now)
	for e := done + 1; e <= o.Epochs; e++ {
		fmt.Fprintf(o.Stdout, "Epoch %d/%d\n", e, o.Epochs)
		start := time.Now()
		for b := 1; b <= o.Batches; b++ {
			if err := o.step(ctx, (e-1)*o.Batches+b); err != nil {
				return err
			}
			bar.Update((e-done-1)*o.Batches + b)
		}
		m := o.Faults.epochLoss(Model(o.LR, o.Width, e), e*o.Batches)
		took := time.Since(start)
		fmt.Fprintf(o.Stdout, "%d/%d - %.0fs - %dms/step - loss: %s - accuracy: %s - val_loss: %s - val_accuracy: %s\n",
			o.Batches, o.Batches, took.Seconds(), took.Milliseconds()/int64(o.Batches), keras(m.Loss), keras(m.Accuracy), keras(m.ValLoss), keras(m.ValAccuracy))
		if o.Checkpoint != "" {
			if err := save(o.Checkpoint, e); err != nil {
				return err
			}
			fmt.Fprintf(o.Stdout, "runall-checkpoint step=%d\n", e)
		}
	}
	bar.Close()
	return nil
}

// step trains one batch, the run's step'th: its time, or the fault it meets there.
func (o Options) step(ctx context.Context, step int) error {
	if err := o.Faults.crash(step, o.Stderr); err != nil {
		return err
	}
	if err := sleep(ctx, o.Faults.batchTime(step, o.BatchTime)); err != nil {
		return err
	}
	return o.Faults.hang(ctx, step, o.BatchTime, o.Stdout)
}

// keras is v as Keras prints it: 4 places, nan as Python writes it.
func keras(v float64) string {
	if math.IsNaN(v) {
		return "nan"
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// save writes the checkpoint of epoch e, replacing the one before whole.
func save(dir string, e int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := outfile.WriteFile(filepath.Join(dir, ckptFile), []byte("epoch "+strconv.Itoa(e)+"\n")); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// restore reads the epoch the checkpoint in dir holds; none there is epoch 0.
func restore(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, ckptFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	e, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(string(b)), "epoch "))
	if err != nil || e < 0 {
		return 0, fmt.Errorf("checkpoint: %s holds %q, not an epoch", filepath.Join(dir, ckptFile), b)
	}
	return e, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
