package gpusim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/runall/runall/size"
)

// claim is this process's claim on some simulated devices: one file per device, each
// flocked for as long as the claim lives, created at its first step (a process shows on a
// GPU once it has a context there).
type claim struct {
	st      *state
	devs    []int
	lag     time.Duration
	profile Profile
	files   []*os.File
	size    uint64         // current size on each device
	load    Load           // what it computes now on each device
	limits  map[int]uint64 // its MPS pinned memory limit by the index it sees the device at
}

// create makes the claim files, holding size. Hold the state lock: no reader can see a file
// before its owner holds it, and mistake it for an ended claim.
func (c *claim) create(size uint64) error {
	name := fmt.Sprintf("%d-%s", os.Getpid(), randomHex(4))
	for _, d := range c.devs {
		dir := filepath.Join(c.st.dir, c.st.uuid(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		c.files = append(c.files, f)
		if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return fmt.Errorf("lock claim %s: %w", f.Name(), err)
		}
		if _, err := f.WriteAt(claimFile{size: size, lag: c.lag, load: c.load}.encode(), 0); err != nil {
			return err
		}
	}
	return nil
}

// set makes the claim size on every device, or fails as CUDA would when that does not fit
// next to everything else the device holds.
func (c *claim) set(want uint64, stderr io.Writer) error {
	return c.st.locked(func() error {
		if want > c.size {
			for k, d := range c.devs {
				skip := ""
				if len(c.files) > 0 {
					skip = filepath.Base(c.files[k].Name())
				}
				others, err := c.st.used(d, skip)
				if err != nil {
					return fmt.Errorf("fake-alloc: %w", err)
				}
				total := c.st.devs[d].Total
				if lim := c.limits[k]; lim > 0 && want > lim {
					// An MPS client sees its pinned limit as its device's memory (mpsclient.go).
					c.outOfMemory(stderr, k, want-c.size, lim, 0)
					return fmt.Errorf("%w: a claim of %s is past the MPS pinned memory limit of %s on its GPU %d",
						ErrOutOfMemory, size.Format(want), size.Format(lim), k)
				}
				if want > total || others > total-want {
					c.outOfMemory(stderr, k, want-c.size, total, others)
					return fmt.Errorf("%w: a claim of %s does not fit on %s (%s total, %s in use besides)",
						ErrOutOfMemory, size.Format(want), c.st.uuid(d), size.Format(total), size.Format(others))
				}
			}
		}
		if len(c.files) == 0 {
			if err := c.create(want); err != nil {
				return fmt.Errorf("fake-alloc: %w", err)
			}
			c.size = want
			return nil
		}
		for _, f := range c.files {
			if _, err := f.WriteAt(claimFile{size: want, lag: c.lag, load: c.load}.encode(), 0); err != nil {
				return fmt.Errorf("fake-alloc: %w", err)
			}
		}
		c.size = want
		return nil
	})
}

// compute says what the claim's owner computes from now on (the zero Load: nothing), so that
// the other processes on its devices, and the probe, count it.
func (c *claim) compute(l Load) error {
	return c.st.locked(func() error {
		c.load = l
		for _, f := range c.files {
			if _, err := f.WriteAt(claimFile{size: c.size, lag: c.lag, load: l}.encode(), 0); err != nil {
				return fmt.Errorf("fake-alloc: %w", err)
			}
		}
		return nil
	})
}

// outOfMemory prints what the profile's framework prints when an allocation of tried
// bytes fails on the k-th of its visible devices.
func (c *claim) outOfMemory(w io.Writer, k int, tried, total, others uint64) {
	free := sub(total, others+c.size)
	switch c.profile {
	case TensorFlow:
		fmt.Fprintf(w, "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[%d] and type float on /job:localhost/replica:0/task:0/device:GPU:%d by allocator GPU_%d_bfc\n",
			tried/4, k, k)
	case JAX:
		fmt.Fprintf(w, "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes.\n", tried)
	case PyTorch:
		fmt.Fprintf(w, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free. "+
			"Including non-PyTorch memory, this process has %s memory in use. Of the allocated memory %s is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. "+
			"If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n",
			torchSize(tried), k, torchSize(total), torchSize(free), torchSize(c.size), torchSize(c.size))
	default:
		fmt.Fprintf(w, "CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; %s already allocated by other processes; %s already allocated by this process)\n",
			size.Format(tried), k, size.Format(total), size.Format(others), size.Format(c.size))
	}
}

// torchSize writes a size as PyTorch's caching allocator does in its messages.
func torchSize(n uint64) string {
	switch {
	case n <= 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n <= 1<<20:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	case n <= 1<<30:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

func sub(a, b uint64) uint64 { return a - min(a, b) }

// release ends the claim: with no lag its files are deleted; otherwise they say when it
// ended, and readers count them until the lag has passed. Closing drops the flocks.
func (c *claim) release() error {
	if len(c.files) == 0 {
		return nil
	}
	var errs []error
	err := c.st.locked(func() error {
		end := claimFile{size: c.size, lag: c.lag, ended: c.st.now()}
		for _, f := range c.files {
			if c.lag > 0 {
				_, err := f.WriteAt(end.encode(), 0)
				errs = append(errs, err)
				continue
			}
			if err := c.st.remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
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
