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
	"strings"
	"syscall"
	"time"
)

// FakeAllocOptions describes one simulated process's memory on simulated GPUs: what it holds
// over time (a profile, or explicit steps), and where.
type FakeAllocOptions struct {
	Size    uint64        // the most it holds on each device, context included, as nvidia-smi shows it
	Ramp    time.Duration // the time it takes to reach Size
	Hold    time.Duration // the time it holds its peak before it ends
	Profile FakeProfile   // how it gets there; the zero value is FakeLinear
	Context uint64        // the CUDA context the framework profiles start with (0: DefaultFakeContext)
	Steps   []FakeStep    // explicit totals over time instead of Size, Ramp and Profile
	Spike   FakeSpike     // an optional transient allocation above the held memory
	// ReleaseLag is how long its memory stays counted after it ended, however it ended.
	ReleaseLag time.Duration

	Devices  string       // the trial's CUDA_VISIBLE_DEVICES: UUIDs or indices of simulated GPUs
	GPUs     []FakeDevice // the simulated GPUs (RUNALL_FAKE_GPUS)
	StateDir string       // their shared state (RUNALL_FAKE_GPU_STATE)
	Stderr   io.Writer

	// Step is the time between growth steps of FakeLinear; zero means Ramp/20, at least 50ms.
	Step time.Duration
	// Sleep waits d or until ctx is done; nil means a timer. Tests replace it to look at the
	// state between steps without depending on timing.
	Sleep func(ctx context.Context, d time.Duration) error
}

// FakeStep is a process's total memory on each of its devices from a time after its start.
type FakeStep struct {
	At   time.Duration
	Size uint64
}

// FakeSpike is a transient allocation of Size above what the process holds, from At for For
// (a workspace freed at once, or a cache emptied): zero Size means none.
type FakeSpike struct {
	Size    uint64
	At, For time.Duration
}

// FakeProfile is how a simulated process's memory grows to its peak.
type FakeProfile int

const (
	// FakeLinear grows from nothing to Size in equal steps over Ramp, with no context: the
	// simulation as it first was, kept to compare against.
	FakeLinear FakeProfile = iota
	// FakePyTorch: the context shortly after start, the data in steps over the ramp, then a
	// jump to the peak at the first optimizer step; the caching allocator holds the peak.
	FakePyTorch
	// FakeTensorFlow with memory growth: the context, then growth in many small steps.
	FakeTensorFlow
	// FakeJAX without preallocation: the context, the data, then the compiled step's buffers.
	FakeJAX
)

var profileNames = []string{"linear", "pytorch", "tensorflow", "jax"}

func (p FakeProfile) String() string { return profileNames[p] }

// ParseFakeProfile reads a profile's name: pytorch, tensorflow, jax or linear.
func ParseFakeProfile(s string) (FakeProfile, error) {
	if i := slices.Index(profileNames, strings.ToLower(strings.TrimSpace(s))); i >= 0 {
		return FakeProfile(i), nil
	}
	return 0, fmt.Errorf("unknown profile %q: want pytorch, tensorflow, jax or linear", s)
}

const (
	// DefaultFakeContext is the context a framework profile starts with: the least that came
	// on top of a PyTorch trial's tensors on an H100 80GB (7.25 GiB in NVML for 6 GiB of
	// tensors): the CUDA context and cuBLAS's workspaces.
	DefaultFakeContext = 1280 << 20
	// fakeContextAt is how soon after its start a process shows its context.
	fakeContextAt = 300 * time.Millisecond
	// DefaultFakeReleaseLag is how long an ended process's memory stays counted: about as
	// long as a real driver took to free a trial's memory after it exited.
	DefaultFakeReleaseLag = time.Second
)

const minStep = 50 * time.Millisecond

// ParseFakeSteps reads "2GiB@1s,6GiB@2.5s,7.2GiB@3s": the process's total memory from each
// time on, in time order.
func ParseFakeSteps(s string) ([]FakeStep, error) {
	var out []FakeStep
	for _, f := range strings.Split(s, ",") {
		size, at, ok := strings.Cut(strings.TrimSpace(f), "@")
		if !ok {
			return nil, fmt.Errorf("step %q: want SIZE@TIME, such as 6GiB@2.5s", f)
		}
		n, err := ParseSize(size)
		if err != nil {
			return nil, fmt.Errorf("step %q: %w", f, err)
		}
		d, err := time.ParseDuration(strings.TrimSpace(at))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("step %q: want a time such as 2.5s after the @", f)
		}
		if len(out) > 0 && d < out[len(out)-1].At {
			return nil, fmt.Errorf("step %q comes before the step ahead of it: list steps in time order", f)
		}
		out = append(out, FakeStep{At: d, Size: n})
	}
	return out, nil
}

// ParseFakeSpike reads "2GiB@3s+500ms": Size more from 3 s after the start, for 500 ms.
func ParseFakeSpike(s string) (FakeSpike, error) {
	size, rest, ok := strings.Cut(strings.TrimSpace(s), "@")
	at, dur, ok2 := strings.Cut(rest, "+")
	if !ok || !ok2 {
		return FakeSpike{}, fmt.Errorf("spike %q: want SIZE@TIME+DURATION, such as 2GiB@3s+500ms", s)
	}
	n, err := ParseSize(size)
	if err != nil {
		return FakeSpike{}, fmt.Errorf("spike %q: %w", s, err)
	}
	a, err1 := time.ParseDuration(strings.TrimSpace(at))
	d, err2 := time.ParseDuration(strings.TrimSpace(dur))
	if err1 != nil || err2 != nil || a < 0 || d <= 0 {
		return FakeSpike{}, fmt.Errorf("spike %q: want SIZE@TIME+DURATION, such as 2GiB@3s+500ms", s)
	}
	return FakeSpike{Size: n, At: a, For: d}, nil
}

// schedule is what the process holds from when on: its steps (never shrinking: the
// allocator keeps what it took) with the spike laid over them.
func (o FakeAllocOptions) schedule() ([]FakeStep, error) {
	steps := o.Steps
	if len(steps) == 0 {
		if o.Size == 0 {
			return nil, errors.New("size must be more than 0")
		}
		steps = o.profileSteps()
	}
	out := make([]FakeStep, 0, len(steps)+2)
	var held uint64
	for _, s := range steps {
		held = max(held, s.Size)
		out = append(out, FakeStep{At: s.At, Size: held})
	}
	if held == 0 {
		return nil, errors.New("the steps never claim any memory")
	}
	if o.Spike.Size > 0 {
		out = spiked(out, o.Spike)
	}
	return out, nil
}

// profileSteps lays Size out over Ramp as o.Profile does.
func (o FakeAllocOptions) profileSteps() []FakeStep {
	size, ramp := o.Size, o.Ramp
	if o.Profile == FakeLinear {
		if ramp == 0 {
			return []FakeStep{{0, size}}
		}
		step := o.Step
		if step == 0 {
			step = max(ramp/20, minStep)
		}
		n := uint64(max((ramp+step-1)/step, 1))
		out := make([]FakeStep, n)
		for k := range n {
			out[k] = FakeStep{At: time.Duration(k+1) * step, Size: scale(size, k+1, n)}
		}
		return out
	}
	ctx := o.Context
	if ctx == 0 {
		ctx = DefaultFakeContext
	}
	ctx = min(ctx, size)
	ctxAt := min(fakeContextAt, ramp/5)
	at := func(k, n int64) time.Duration { return ctxAt + (ramp-ctxAt)*time.Duration(k)/time.Duration(n) }
	rest := size - ctx
	out := []FakeStep{{ctxAt, ctx}}
	switch o.Profile {
	case FakePyTorch:
		// The data over three steps to 85% of the rest; the optimizer's state at the end.
		for k := int64(1); k <= 3; k++ {
			out = append(out, FakeStep{at(k, 4), ctx + scale(rest, uint64(k)*85, 300)})
		}
	case FakeTensorFlow:
		for k := int64(1); k < 10; k++ {
			out = append(out, FakeStep{at(k, 10), ctx + scale(rest, uint64(k), 10)})
		}
	case FakeJAX:
		out = append(out, FakeStep{at(1, 2), ctx + rest/2})
	}
	return append(out, FakeStep{ramp, size})
}

// spiked lays a transient allocation over held, a schedule that never shrinks.
func spiked(held []FakeStep, sp FakeSpike) []FakeStep {
	end := sp.At + sp.For
	heldAt := func(t time.Duration) uint64 {
		var n uint64
		for _, s := range held {
			if s.At <= t {
				n = s.Size
			}
		}
		return n
	}
	times := []time.Duration{sp.At, end}
	for _, s := range held {
		times = append(times, s.At)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	out := make([]FakeStep, 0, len(times))
	for _, t := range times {
		n := heldAt(t)
		if t >= sp.At && t < end {
			n += sp.Size
		}
		out = append(out, FakeStep{t, n})
	}
	return out
}

// FakeAlloc claims memory on each of the given simulated GPUs as a training process does:
// from its schedule (Steps, or Size over Ramp as Profile lays it out), held until Hold after
// its last step, then given back over ReleaseLag. A step that does not fit next to what else
// the device holds fails as CUDA would, writing the framework's own out-of-memory message to
// Stderr and returning an error wrapping ErrOutOfMemory. On ctx's end it ends and returns
// ctx's error. If the process dies instead, its memory lingers all the same.
func FakeAlloc(ctx context.Context, opts FakeAllocOptions) (err error) {
	if opts.Ramp < 0 || opts.Hold < 0 || opts.Step < 0 || opts.ReleaseLag < 0 {
		return errors.New("fake-alloc: ramp, hold, step and release lag cannot be negative")
	}
	sched, err := opts.schedule()
	if err != nil {
		return fmt.Errorf("fake-alloc: %w", err)
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	st, err := openFakeState(opts.StateDir, opts.GPUs)
	if err != nil {
		return fmt.Errorf("fake-alloc: %w", err)
	}
	devs, err := st.resolve(opts.Devices)
	if err != nil {
		return fmt.Errorf("fake-alloc: %w", err)
	}

	c := &claim{st: st, devs: devs, lag: opts.ReleaseLag, profile: opts.Profile}
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
	if opts.Hold > 0 {
		if err := until(last+opts.Hold, opts.Hold); err != nil {
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
				EnvCUDAVisibleDevices, visible, e, len(s.devs), s.dir, s.uuid(0), s.uuid(len(s.devs)-1))
		}
		if slices.Contains(out, i) {
			return nil, fmt.Errorf("%s=%q: %q is listed twice", EnvCUDAVisibleDevices, visible, e)
		}
		out = append(out, i)
	}
	return out, nil
}

// claim is this process's claim on some simulated devices: one file per device, each
// flocked for as long as the claim lives, created at its first step (a process shows on a
// GPU once it has a context there).
type claim struct {
	st      *fakeState
	devs    []int
	lag     time.Duration
	profile FakeProfile
	files   []*os.File
	size    uint64 // current size on each device
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
		if _, err := f.WriteAt(claimFile{size: size, lag: c.lag}.encode(), 0); err != nil {
			return err
		}
	}
	return nil
}

// set makes the claim size on every device, or fails as CUDA would when that does not fit
// next to everything else the device holds.
func (c *claim) set(size uint64, stderr io.Writer) error {
	return c.st.locked(func() error {
		if size > c.size {
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
				if size > total || others > total-size {
					c.outOfMemory(stderr, k, size-c.size, total, others)
					return fmt.Errorf("%w: a claim of %s does not fit on %s (%s total, %s in use besides)",
						ErrOutOfMemory, FormatSize(size), c.st.uuid(d), FormatSize(total), FormatSize(others))
				}
			}
		}
		if len(c.files) == 0 {
			if err := c.create(size); err != nil {
				return fmt.Errorf("fake-alloc: %w", err)
			}
			c.size = size
			return nil
		}
		for _, f := range c.files {
			if _, err := f.WriteAt(claimFile{size: size, lag: c.lag}.encode(), 0); err != nil {
				return fmt.Errorf("fake-alloc: %w", err)
			}
		}
		c.size = size
		return nil
	})
}

// outOfMemory prints what the profile's framework prints when an allocation of tried
// bytes fails on the k-th of its visible devices.
func (c *claim) outOfMemory(w io.Writer, k int, tried, total, others uint64) {
	free := sub(total, others+c.size)
	switch c.profile {
	case FakeTensorFlow:
		fmt.Fprintf(w, "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[%d] and type float on /job:localhost/replica:0/task:0/device:GPU:%d by allocator GPU_%d_bfc\n",
			tried/4, k, k)
	case FakeJAX:
		fmt.Fprintf(w, "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes.\n", tried)
	case FakePyTorch:
		fmt.Fprintf(w, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free. "+
			"Including non-PyTorch memory, this process has %s memory in use. Of the allocated memory %s is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. "+
			"If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n",
			torchSize(tried), k, torchSize(total), torchSize(free), torchSize(c.size), torchSize(c.size))
	default:
		fmt.Fprintf(w, "CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; %s already allocated by other processes; %s already allocated by this process)\n",
			FormatSize(tried), k, FormatSize(total), FormatSize(others), FormatSize(c.size))
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
