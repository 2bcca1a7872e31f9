package gpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// FakeAllocOptions describes one claim of simulated GPU memory.
type FakeAllocOptions struct {
	Size uint64        // bytes to claim on each device
	Ramp time.Duration // time to grow the claim linearly from 0 to Size
	Hold time.Duration // time to hold Size before releasing it

	Devices  string   // the trial's CUDA_VISIBLE_DEVICES: UUIDs or indices of simulated GPUs
	Sizes    []uint64 // the simulated GPUs (RUNALL_FAKE_GPUS)
	StateDir string   // their shared state (RUNALL_FAKE_GPU_STATE)
	Stderr   io.Writer

	// Step is the time between growth steps; zero means Ramp/20, at least 50ms.
	Step time.Duration
	// Sleep waits d or until ctx is done; nil means a timer. Tests replace it to look at the
	// state between steps without depending on timing.
	Sleep func(ctx context.Context, d time.Duration) error
}

const minStep = 50 * time.Millisecond

// FakeAlloc claims Size bytes on each of the given simulated GPUs, as a training process
// would allocate memory: growing over Ramp, held for Hold, then released. A step that does
// not fit next to the other live claims fails as CUDA would, writing "CUDA out of memory" to
// Stderr and returning an error wrapping ErrOutOfMemory. On ctx's end it releases the claim
// and returns ctx's error. If the process dies instead, its claim vanishes with it.
func FakeAlloc(ctx context.Context, opts FakeAllocOptions) (err error) {
	if opts.Size == 0 {
		return errors.New("fake-alloc: size must be more than 0")
	}
	if opts.Ramp < 0 || opts.Hold < 0 || opts.Step < 0 {
		return errors.New("fake-alloc: ramp, hold and step cannot be negative")
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	st, err := openFakeState(opts.StateDir, opts.Sizes)
	if err != nil {
		return fmt.Errorf("fake-alloc: %w", err)
	}
	devs, err := st.resolve(opts.Devices)
	if err != nil {
		return fmt.Errorf("fake-alloc: %w", err)
	}

	c := &claim{st: st, devs: devs}
	defer func() {
		if rerr := c.release(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("fake-alloc: release: %w", rerr))
		}
	}()
	if err := c.create(); err != nil {
		return fmt.Errorf("fake-alloc: %w", err)
	}

	// Each step and the end of the hold fall due at a time fixed from the start, so that the
	// time the steps themselves take (a lock and a look at the other claims, longer on a busy
	// machine) does not add up: the claim lasts ramp + hold, as the benchmarks count it.
	begin := time.Now()
	until := func(at, d time.Duration) error {
		if opts.Sleep != nil {
			return opts.Sleep(ctx, d)
		}
		return sleepCtx(ctx, time.Until(begin.Add(at)))
	}
	steps, step := uint64(1), time.Duration(0)
	if opts.Ramp > 0 {
		step = opts.Step
		if step == 0 {
			step = max(opts.Ramp/20, minStep)
		}
		steps = uint64(max((opts.Ramp+step-1)/step, 1))
	}
	for k := uint64(1); k <= steps; k++ {
		if step > 0 {
			if err := until(time.Duration(k)*step, step); err != nil {
				return err
			}
		}
		if err := c.grow(scale(opts.Size, k, steps), stderr); err != nil {
			return err
		}
	}
	if opts.Hold > 0 {
		if err := until(time.Duration(steps)*step+opts.Hold, opts.Hold); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// scale is size*k/n without overflow, for k <= n.
func scale(size, k, n uint64) uint64 {
	hi, lo := bits.Mul64(size, k)
	q, _ := bits.Div64(hi, lo, n)
	return q
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resolve maps a CUDA_VISIBLE_DEVICES value to simulated device indices.
func (s *fakeState) resolve(visible string) ([]int, error) {
	entries := splitList(visible)
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s is empty: no simulated GPU to claim memory on", EnvCUDAVisibleDevices)
	}
	var out []int
	for _, e := range entries {
		i := -1
		if n, err := strconv.Atoi(e); err == nil && n >= 0 && n < len(s.sizes) {
			i = n
		}
		for j := range s.sizes {
			if e == s.uuid(j) {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("%s=%q: %q is not one of the %d simulated GPUs in %s (UUIDs %s to %s)",
				EnvCUDAVisibleDevices, visible, e, len(s.sizes), s.dir, s.uuid(0), s.uuid(len(s.sizes)-1))
		}
		if slices.Contains(out, i) {
			return nil, fmt.Errorf("%s=%q: %q is listed twice", EnvCUDAVisibleDevices, visible, e)
		}
		out = append(out, i)
	}
	return out, nil
}

// claim is this process's claim on some simulated devices: one file per device, each
// flocked for as long as the claim lives.
type claim struct {
	st    *fakeState
	devs  []int
	files []*os.File
	size  uint64 // current size on each device
}

func (c *claim) create() error {
	name := fmt.Sprintf("%d-%s", os.Getpid(), randomHex(4))
	return c.st.locked(func() error {
		for _, d := range c.devs {
			dir := filepath.Join(c.st.dir, c.st.uuid(d))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			// Created, locked and written under the state lock: no reader can see the file
			// before its owner holds it, and mistake it for a dead claim.
			f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			c.files = append(c.files, f)
			if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				return fmt.Errorf("lock claim %s: %w", f.Name(), err)
			}
			if err := writeClaim(f, 0); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeClaim rewrites the size in place at fixed width. Readers read it only under the
// state lock, which the writer holds too, so they never see half of it.
func writeClaim(f *os.File, size uint64) error {
	b := fmt.Appendf(nil, "%0*d\n", claimWidth-1, size)
	_, err := f.WriteAt(b, 0)
	return err
}

// grow sets the claim to size on every device, or fails as CUDA would when that does not fit
// next to everyone else's live claims.
func (c *claim) grow(size uint64, stderr io.Writer) error {
	return c.st.locked(func() error {
		for k, d := range c.devs {
			others, err := c.st.used(d, filepath.Base(c.files[k].Name()))
			if err != nil {
				return fmt.Errorf("fake-alloc: %w", err)
			}
			total := c.st.sizes[d]
			if size > total || others > total-size {
				fmt.Fprintf(stderr, "CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; %s already allocated by other processes; %s already allocated by this process)\n",
					FormatSize(size-c.size), k, FormatSize(total), FormatSize(others), FormatSize(c.size))
				return fmt.Errorf("%w: a claim of %s does not fit on %s (%s total, %s claimed by others)",
					ErrOutOfMemory, FormatSize(size), c.st.uuid(d), FormatSize(total), FormatSize(others))
			}
		}
		for _, f := range c.files {
			if err := writeClaim(f, size); err != nil {
				return fmt.Errorf("fake-alloc: %w", err)
			}
		}
		c.size = size
		return nil
	})
}

// release deletes the claim files, then closes them, which drops their flocks.
func (c *claim) release() error {
	if len(c.files) == 0 {
		return nil
	}
	var errs []error
	err := c.st.locked(func() error {
		for _, f := range c.files {
			if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return nil
	})
	for _, f := range c.files {
		errs = append(errs, f.Close())
	}
	c.files = nil
	return errors.Join(append(errs, err)...)
}
