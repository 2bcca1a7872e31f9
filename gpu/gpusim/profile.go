package gpusim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runall/runall/size"
)

// Step is a process's total memory on each of its devices from a time after its start.
type Step struct {
	At   time.Duration
	Size uint64
}

// Spike is a transient allocation of Size above what the process holds, from At for For
// (a workspace freed at once, or a cache emptied): zero Size means none.
type Spike struct {
	Size    uint64
	At, For time.Duration
}

// Profile is how a simulated process's memory grows to its peak.
type Profile int

const (
	// Linear grows from nothing to Size in equal steps over Ramp, with no context: the
	// simulation as it first was, kept to compare against.
	Linear Profile = iota
	// PyTorch: the context shortly after start, the data in steps over the ramp, then a
	// jump to the peak at the first optimizer step; the caching allocator holds the peak.
	PyTorch
	// TensorFlow with memory growth: the context, then growth in many small steps.
	TensorFlow
	// JAX without preallocation: the context, the data, then the compiled step's buffers.
	JAX
)

var profileNames = []string{"linear", "pytorch", "tensorflow", "jax"}

func (p Profile) String() string { return profileNames[p] }

// ParseProfile reads a profile's name: pytorch, tensorflow, jax or linear.
func ParseProfile(s string) (Profile, error) {
	if i := slices.Index(profileNames, strings.ToLower(strings.TrimSpace(s))); i >= 0 {
		return Profile(i), nil
	}
	return 0, fmt.Errorf("unknown profile %q: want pytorch, tensorflow, jax or linear", s)
}

const (
	// DefaultContext is the context a framework profile starts with: the least that came
	// on top of a PyTorch trial's tensors on an H100 80GB (7.25 GiB in NVML for 6 GiB of
	// tensors): the CUDA context and cuBLAS's workspaces.
	DefaultContext = 1280 << 20
	// contextAt is how soon after its start a process shows its context.
	contextAt = 300 * time.Millisecond
	// DefaultReleaseLag is how long an ended process's memory stays counted: about as
	// long as a real driver took to free a trial's memory after it exited.
	DefaultReleaseLag = time.Second
)

const minStep = 50 * time.Millisecond

// ParseSteps reads "2GiB@1s,6GiB@2.5s,7.2GiB@3s": the process's total memory from each
// time on, in time order.
func ParseSteps(s string) ([]Step, error) {
	var out []Step
	for _, f := range strings.Split(s, ",") {
		amount, at, ok := strings.Cut(strings.TrimSpace(f), "@")
		if !ok {
			return nil, fmt.Errorf("step %q: want SIZE@TIME, such as 6GiB@2.5s", f)
		}
		n, err := size.Parse(amount)
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
		out = append(out, Step{At: d, Size: n})
	}
	return out, nil
}

// ParseSpike reads "2GiB@3s+500ms": Size more from 3 s after the start, for 500 ms.
func ParseSpike(s string) (Spike, error) {
	amount, rest, ok := strings.Cut(strings.TrimSpace(s), "@")
	at, dur, ok2 := strings.Cut(rest, "+")
	if !ok || !ok2 {
		return Spike{}, fmt.Errorf("spike %q: want SIZE@TIME+DURATION, such as 2GiB@3s+500ms", s)
	}
	n, err := size.Parse(amount)
	if err != nil {
		return Spike{}, fmt.Errorf("spike %q: %w", s, err)
	}
	a, err1 := time.ParseDuration(strings.TrimSpace(at))
	d, err2 := time.ParseDuration(strings.TrimSpace(dur))
	if err1 != nil || err2 != nil || a < 0 || d <= 0 {
		return Spike{}, fmt.Errorf("spike %q: want SIZE@TIME+DURATION, such as 2GiB@3s+500ms", s)
	}
	return Spike{Size: n, At: a, For: d}, nil
}

// schedule is what the process holds from when on: its steps (never shrinking: the
// allocator keeps what it took) with the spike laid over them.
func (o AllocOptions) schedule() ([]Step, error) {
	steps := o.Steps
	if len(steps) == 0 {
		if o.Size == 0 {
			return nil, errors.New("size must be more than 0")
		}
		steps = o.profileSteps()
	}
	out := make([]Step, 0, len(steps)+2)
	var held uint64
	for _, s := range steps {
		held = max(held, s.Size)
		out = append(out, Step{At: s.At, Size: held})
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
func (o AllocOptions) profileSteps() []Step {
	size, ramp := o.Size, o.Ramp
	if o.Profile == Linear {
		if ramp == 0 {
			return []Step{{0, size}}
		}
		step := o.Step
		if step == 0 {
			step = max(ramp/20, minStep)
		}
		n := uint64(max((ramp+step-1)/step, 1))
		out := make([]Step, n)
		for k := range n {
			out[k] = Step{At: time.Duration(k+1) * step, Size: scale(size, k+1, n)}
		}
		return out
	}
	ctx := o.Context
	if ctx == 0 {
		ctx = DefaultContext
	}
	ctx = min(ctx, size)
	ctxAt := min(contextAt, ramp/5)
	at := func(k, n int64) time.Duration { return ctxAt + (ramp-ctxAt)*time.Duration(k)/time.Duration(n) }
	rest := size - ctx
	out := []Step{{ctxAt, ctx}}
	switch o.Profile {
	case PyTorch:
		// The data over three steps to 85% of the rest; the optimizer's state at the end.
		for k := int64(1); k <= 3; k++ {
			out = append(out, Step{at(k, 4), ctx + scale(rest, uint64(k)*85, 300)})
		}
	case TensorFlow:
		for k := int64(1); k < 10; k++ {
			out = append(out, Step{at(k, 10), ctx + scale(rest, uint64(k), 10)})
		}
	case JAX:
		out = append(out, Step{at(1, 2), ctx + rest/2})
	}
	return append(out, Step{ramp, size})
}

// spiked lays a transient allocation over held, a schedule that never shrinks.
func spiked(held []Step, sp Spike) []Step {
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
	out := make([]Step, 0, len(times))
	for _, t := range times {
		n := heldAt(t)
		if t >= sp.At && t < end {
			n += sp.Size
		}
		out = append(out, Step{t, n})
	}
	return out
}
