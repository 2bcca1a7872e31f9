package gpusim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/runall/runall/gpu"
)

// AllocOptions describes one simulated process's memory on simulated GPUs: what it holds
// over time (a profile, or explicit steps), and where.
//
//limits:flat an options struct its callers (fake-alloc's flags, tests) fill by name, one setting a field; parts would only add a level to each
type AllocOptions struct {
	Size    uint64        // the most it holds on each device, context included, as nvidia-smi shows it
	Ramp    time.Duration // the time it takes to reach Size
	Hold    time.Duration // the time it holds its peak before it ends
	Profile Profile       // how it gets there; the zero value is Linear
	Context uint64        // the CUDA context the framework profiles start with (0: DefaultContext)
	Steps   []Step        // explicit totals over time instead of Size, Ramp and Profile
	Spike   Spike         // an optional transient allocation above the held memory
	// ReleaseLag is how long its memory stays counted after it ended, however it ended.
	ReleaseLag time.Duration
	// Train is the training loop it runs once its memory is at its peak, printing tqdm's
	// progress to Stderr, before Hold; the zero value runs none.
	Train Train

	Devices  string   // the trial's CUDA_VISIBLE_DEVICES: UUIDs or indices of simulated GPUs
	GPUs     []Device // the simulated GPUs (RUNALL_FAKE_GPUS)
	StateDir string   // their shared state (RUNALL_FAKE_GPU_STATE)
	Stderr   io.Writer
	MPS      MPSClient // the trial's MPS server, when it runs under gpu-isolation: mps

	// Step is the time between growth steps of Linear; zero means Ramp/20, at least 50ms.
	Step time.Duration
	// Sleep waits d or until ctx is done; nil means a timer. Tests replace it to look at the
	// state between steps without depending on timing.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Alloc claims memory on each of the given simulated GPUs as a training process does:
// from its schedule (Steps, or Size over Ramp as Profile lays it out), held through the
// training steps of Train, if any, and until Hold after them, then given back over
// ReleaseLag. A step that does not fit next to what else the device holds fails as CUDA
// would, writing the framework's own out-of-memory message to Stderr and returning an
// error wrapping ErrOutOfMemory. On ctx's end it ends and returns
// ctx's error. If the process dies instead, its memory lingers all the same.
func Alloc(ctx context.Context, opts AllocOptions) (err error) {
	sched, stderr, c, err := opts.open()
	if err != nil {
		return err
	}
	ctx, endFaults := watchFaults(ctx, c, stderr) // faults_kill.go: a fault that kills it ends ctx
	defer func() { err = endFaults(err) }()
	ctx, endMPS, err := opts.MPS.join(ctx, stderr)
	if err != nil {
		return err
	}
	defer func() { err = endMPS(err) }()
	c.limits = opts.MPS.Limits
	if opts.MPS.joined(ctx) {
		c.st.overlap() // its kernels run beside its co-clients' (compute.go's MPS model)
	}
	defer func() {
		if rerr := c.release(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("fake-alloc: release: %w", rerr))
		}
	}()

	// Each step and the end of the hold fall due at a time fixed from the start, so that the
	// time the steps themselves take (a lock and a look at the other claims, longer on a busy
	// machine) does not add up: the claim lasts its last step + hold, as the benchmarks count it.
	begin := time.Now()
	until := func(at, d time.Duration) error {
		if opts.Sleep != nil {
			return opts.Sleep(ctx, d)
		}
		return sleepCtx(ctx, time.Until(begin.Add(at)))
	}
	var last time.Duration
	for _, s := range sched {
		if s.At > 0 {
			if err := until(s.At, s.At-last); err != nil {
				return err
			}
		}
		last = s.At
		if err := c.set(s.Size, stderr); err != nil {
			return err
		}
	}
	if opts.Train.Steps > 0 {
		if err := c.train(ctx, opts.Train, stderr); err != nil {
			return err
		}
		begin, last = time.Now(), 0 // the hold counts from the last training step
	}
	if opts.Hold > 0 {
		if err := until(last+opts.Hold, opts.Hold); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// open checks the options, lays out the memory schedule and opens the shared state.
func (opts AllocOptions) open() (sched []Step, stderr io.Writer, c *claim, err error) {
	if opts.Ramp < 0 || opts.Hold < 0 || opts.Step < 0 || opts.ReleaseLag < 0 {
		return nil, nil, nil, errors.New("fake-alloc: ramp, hold, step and release lag cannot be negative")
	}
	if err := opts.Train.Validate(); err != nil {
		return nil, nil, nil, fmt.Errorf("fake-alloc: %w", err)
	}
	if sched, err = opts.schedule(); err != nil {
		return nil, nil, nil, fmt.Errorf("fake-alloc: %w", err)
	}
	stderr = opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	st, err := openState(opts.StateDir, opts.GPUs)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("fake-alloc: %w", err)
	}
	devs, err := st.resolve(opts.Devices)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("fake-alloc: %w", err)
	}
	return sched, stderr, &claim{st: st, devs: devs, lag: opts.ReleaseLag, profile: opts.Profile}, nil
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
func (s *state) resolve(visible string) ([]int, error) {
	entries := splitList(visible)
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s is empty: no simulated GPU to claim memory on", gpu.EnvCUDAVisibleDevices)
	}
	var out []int
	for _, e := range entries {
		i := -1
		if n, err := strconv.Atoi(e); err == nil && n >= 0 && n < len(s.devs) {
			i = n
		}
		for j := range s.devs {
			if e == s.uuid(j) {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("%s=%q: %q is not one of the %d simulated GPUs in %s (UUIDs %s to %s)",
				gpu.EnvCUDAVisibleDevices, visible, e, len(s.devs), s.dir, s.uuid(0), s.uuid(len(s.devs)-1))
		}
		if slices.Contains(out, i) {
			return nil, fmt.Errorf("%s=%q: %q is listed twice", gpu.EnvCUDAVisibleDevices, visible, e)
		}
		out = append(out, i)
	}
	return out, nil
}
