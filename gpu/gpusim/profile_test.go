package gpusim

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/size"
)

const mi = uint64(1) << 20

func TestSchedule(t *testing.T) {
	ctx := uint64(DefaultContext)
	tests := []struct {
		name string
		opts AllocOptions
		want []Step
	}{
		{"linear, all at once", AllocOptions{Size: 4 * gi}, []Step{{0, 4 * gi}}},
		{"linear over a second", AllocOptions{Size: 4 * gi, Ramp: time.Second, Step: 250 * time.Millisecond},
			[]Step{{250 * time.Millisecond, gi}, {500 * time.Millisecond, 2 * gi}, {750 * time.Millisecond, 3 * gi}, {time.Second, 4 * gi}}},
		{"pytorch: context, data in three steps, the optimizer's jump", AllocOptions{Size: 7 * gi, Ramp: 2300 * time.Millisecond, Profile: PyTorch},
			[]Step{{300 * time.Millisecond, ctx}, {800 * time.Millisecond, ctx + scale(7*gi-ctx, 85, 300)},
				{1300 * time.Millisecond, ctx + scale(7*gi-ctx, 170, 300)}, {1800 * time.Millisecond, ctx + scale(7*gi-ctx, 255, 300)},
				{2300 * time.Millisecond, 7 * gi}}},
		{"jax: context, data, the compiled step", AllocOptions{Size: 5 * gi, Ramp: 2300 * time.Millisecond, Profile: JAX, Context: gi},
			[]Step{{300 * time.Millisecond, gi}, {1300 * time.Millisecond, 3 * gi}, {2300 * time.Millisecond, 5 * gi}}},
		{"a size below the context is all context", AllocOptions{Size: 512 * mi, Ramp: time.Second, Profile: JAX},
			[]Step{{200 * time.Millisecond, 512 * mi}, {600 * time.Millisecond, 512 * mi}, {time.Second, 512 * mi}}},
		{"explicit steps never shrink: the allocator keeps its cache", AllocOptions{Steps: []Step{{time.Second, 2 * gi}, {2 * time.Second, gi}, {3 * time.Second, 6 * gi}}},
			[]Step{{time.Second, 2 * gi}, {2 * time.Second, 2 * gi}, {3 * time.Second, 6 * gi}}},
		{"a spike comes and goes above what is held", AllocOptions{Steps: []Step{{time.Second, 2 * gi}, {3 * time.Second, 6 * gi}},
			Spike: Spike{Size: gi, At: 2 * time.Second, For: 2 * time.Second}},
			[]Step{{time.Second, 2 * gi}, {2 * time.Second, 3 * gi}, {3 * time.Second, 7 * gi}, {4 * time.Second, 6 * gi}}},
	}
	for _, tt := range tests {
		got, err := tt.opts.schedule()
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: schedule = %v, %v\nwant %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := (AllocOptions{}).schedule(); err == nil {
		t.Error("a schedule with no size and no steps was accepted")
	}
	// TensorFlow grows in ten steps after its context, and ends at the peak.
	tf, err := AllocOptions{Size: 9 * gi, Ramp: 3 * time.Second, Profile: TensorFlow}.schedule()
	if err != nil || len(tf) != 11 || tf[0] != (Step{300 * time.Millisecond, ctx}) || tf[10] != (Step{3 * time.Second, 9 * gi}) {
		t.Errorf("tensorflow schedule = %v, %v", tf, err)
	}
}

func TestParseStepsAndSpike(t *testing.T) {
	steps, err := ParseSteps("2GiB@1s, 6GiB@2.5s,7.2GiB@3s")
	want := []Step{{time.Second, 2 * gi}, {2500 * time.Millisecond, 6 * gi}, {3 * time.Second, 7730941132 /* 7.2 GiB, as ParseSize rounds it */}}
	if err != nil || !slices.Equal(steps, want) {
		t.Errorf("ParseSteps = %v, %v; want %v", steps, err, want)
	}
	for _, bad := range []string{"2GiB", "2GiB@soon", "lots@1s", "2GiB@2s,3GiB@1s", "2GiB@-1s"} {
		if _, err := ParseSteps(bad); err == nil {
			t.Errorf("ParseSteps(%q) accepted", bad)
		}
	}
	sp, err := ParseSpike("1GiB@3s+200ms")
	if err != nil || sp != (Spike{Size: gi, At: 3 * time.Second, For: 200 * time.Millisecond}) {
		t.Errorf("ParseSpike = %+v, %v", sp, err)
	}
	for _, bad := range []string{"1GiB@3s", "1GiB+2s", "1GiB@3s+0s", "x@1s+1s"} {
		if _, err := ParseSpike(bad); err == nil {
			t.Errorf("ParseSpike(%q) accepted", bad)
		}
	}
	for _, name := range []string{"pytorch", "TensorFlow", "jax", "linear"} {
		if _, err := ParseProfile(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseProfile("caffe"); err == nil {
		t.Error("ParseProfile accepted caffe")
	}
}

// The device shows each step of a PyTorch-like process at its time: nothing before its
// context, the context, the data, the peak, held to the end.
func TestAllocSteps(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(16 * gi)
	p := openFakeT(t, dir, devs)
	type look struct {
		at    time.Duration
		used  uint64
		procs int
	}
	var looks []look
	var at time.Duration
	opts := AllocOptions{Size: 7 * gi, Ramp: 2300 * time.Millisecond, Hold: time.Minute, Profile: PyTorch,
		Devices: "0", GPUs: devs, StateDir: dir,
		Sleep: func(_ context.Context, d time.Duration) error {
			procs, err := p.Processes(0)
			looks = append(looks, look{at, devicesT(t, p)[0].Used, len(procs)})
			at += d
			return err
		}}
	if err := Alloc(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	sched, _ := opts.schedule()
	// A look just before each step sees the one before it; the last, while holding, the peak.
	want := []look{{0, 0, 0}}
	for _, s := range sched {
		want = append(want, look{s.At, s.Size, 1})
	}
	if !slices.Equal(looks, want) {
		t.Errorf("looks before each step and while holding:\n got %v\nwant %v", looks, want)
	}
	if last := looks[len(looks)-1]; last.used != 7*gi {
		t.Errorf("held %s, want the 7 GiB peak", size.Format(last.used))
	}
}

// lateClock is a clock ahead of time.Now by an offset a test moves.
type lateClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *lateClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *lateClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

func openFakeClock(t *testing.T, dir string, devs []Device) (gpu.Probe, *lateClock) {
	t.Helper()
	p := openFakeT(t, dir, devs)
	c := &lateClock{}
	p.(*probe).st.now = c.now
	return p, c
}

// A process's memory stays counted for its release lag after it ended, with no process
// shown for it, and then is gone.
func TestAllocReleaseLag(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(16 * gi)
	p, clock := openFakeClock(t, dir, devs)
	err := Alloc(context.Background(), AllocOptions{Size: 3 * gi, ReleaseLag: time.Minute,
		Devices: "0", GPUs: devs, StateDir: dir, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if d := devicesT(t, p)[0]; d.Used != 3*gi {
		t.Errorf("right after the end: used %s, want the 3 GiB still counted", size.Format(d.Used))
	}
	if procs, err := p.Processes(0); err != nil || len(procs) != 0 {
		t.Errorf("processes after the end = %v, %v; want none", procs, err)
	}
	// It counts for others' claims too: 14 GiB does not fit beside it.
	var stderr bytes.Buffer
	err = Alloc(context.Background(), AllocOptions{Size: 14 * gi, Devices: "0", GPUs: devs, StateDir: dir, Stderr: &stderr})
	if !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("a claim beside lingering memory: %v, want out of memory", err)
	}
	clock.advance(time.Minute)
	if d := devicesT(t, p)[0]; d.Used != 0 {
		t.Errorf("after the lag: used %s, want 0", size.Format(d.Used))
	}
}

// A claimant killed with SIGKILL, which leaves it no chance to say it ended: its memory is
// counted for its lag from when it is found dead, then gone.
func TestAllocKilledLingers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	devs := fakeSizes(8 * gi)
	p, clock := openFakeClock(t, dir, devs)
	env := []string{
		EnvGPUs + "=" + FormatSpec(devs), EnvState + "=" + dir,
		gpu.EnvCUDAVisibleDevices + "=0", helperSize + "=5GiB", helperLag + "=1s",
	}
	fit, _ := startHelpers(t, 1, env)
	if len(fit) != 1 {
		t.Fatal("the helper's claim did not fit")
	}
	fit[0].cmd.Process.Kill()
	fit[0].cmd.Wait()
	if d := devicesT(t, p)[0]; d.Used != 5*gi {
		t.Errorf("right after SIGKILL: used %s, want its 5 GiB for the lag", size.Format(d.Used))
	}
	if procs, _ := p.Processes(0); len(procs) != 0 {
		t.Errorf("processes after SIGKILL = %v, want none: the process is gone, its memory not yet", procs)
	}
	clock.advance(900 * time.Millisecond)
	if d := devicesT(t, p)[0]; d.Used != 5*gi {
		t.Errorf("0.9 s after: used %s, want its 5 GiB still", size.Format(d.Used))
	}
	clock.advance(200 * time.Millisecond)
	if d := devicesT(t, p)[0]; d.Used != 0 {
		t.Errorf("after the lag: used %s, want 0", size.Format(d.Used))
	}
}

// The driver's reserve is used memory no process holds; a foreign process holds memory and
// names no process of runall's. Neither can be claimed.
func TestReserveAndForeign(t *testing.T) {
	dir := t.TempDir()
	devs := []Device{{Total: 16 * gi, Reserve: 512 * mi, Foreign: 4 * gi}}
	for _, mode := range []PIDs{PIDsLocal, PIDsHost, PIDsNone} {
		p, err := Open(Options{Devices: devs, StateDir: dir, PIDs: mode})
		if err != nil {
			t.Fatal(err)
		}
		if d := devicesT(t, p)[0]; d.Used != 4*gi+512*mi || d.Free != 16*gi-d.Used {
			t.Errorf("mode %d: %+v, want the reserve and the foreign process used", mode, d)
		}
		procs, err := p.Processes(0)
		want := []gpu.Process{{PID: foreignPID(0), UsedMemory: 4 * gi}}
		if mode == PIDsNone {
			want = []gpu.Process{}
		}
		if err != nil || !slices.Equal(procs, want) {
			t.Errorf("mode %d: processes %+v, %v; want %+v", mode, procs, err, want)
		}
		if foreignPID(0) < 2*hostPIDOffset || procs != nil && len(procs) > 0 && procs[0].Local {
			t.Errorf("the foreign process could be taken for a local or host PID of a claimant")
		}
	}
	var stderr bytes.Buffer
	err := Alloc(context.Background(), AllocOptions{Size: 12 * gi, Profile: PyTorch, Devices: "0", GPUs: devs, StateDir: dir, Stderr: &stderr})
	if !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("12 GiB beside 4.5 GiB on 16 GiB: %v, want out of memory", err)
	}
	if err := Alloc(context.Background(), AllocOptions{Size: 11 * gi, Profile: PyTorch, Devices: "0", GPUs: devs, StateDir: dir}); err != nil {
		t.Errorf("11 GiB beside 4.5 GiB on 16 GiB: %v", err)
	}
}

// Each framework profile fails as its framework does; PyTorch's message says what the
// process held and tried to allocate, as PyTorch 2.x prints it.
func TestAllocOutOfMemoryMessages(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(8 * gi)
	tests := []struct {
		profile Profile
		want    string
	}{
		{PyTorch, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.00 GiB. GPU 0 has a total capacity of 8.00 GiB of which 6.75 GiB is free. " +
			"Including non-PyTorch memory, this process has 1.25 GiB memory in use."},
		{TensorFlow, "ResourceExhaustedError: OOM when allocating tensor with shape["},
		{JAX, "RESOURCE_EXHAUSTED: Out of memory while trying to allocate "},
		{Linear, "CUDA out of memory. Tried to allocate"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		// The PyTorch one: its context fits, then one step of 7 GiB does not.
		opts := AllocOptions{Steps: []Step{{0, DefaultContext}, {0, 10 * gi}}, Profile: tt.profile,
			Devices: "0", GPUs: devs, StateDir: dir, Stderr: &stderr}
		if tt.profile == PyTorch {
			opts.Steps = []Step{{0, DefaultContext}, {0, DefaultContext + 7*gi}}
		}
		err := Alloc(context.Background(), opts)
		if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: %v, stderr %q; want it to say %q", tt.profile, err, stderr.String(), tt.want)
		}
	}
}

// TestFakeClaimKilledWhileMade: a claim file left empty (its fake-alloc was killed between
// making it and writing it, as a Pod's SIGKILL does) held nothing: it is dropped, and the
// device reads as free instead of failing every trial's measurement with EOF.
func TestClaimKilledWhileMade(t *testing.T) {
	dir := t.TempDir()
	p := openFakeT(t, dir, fakeSizes(8*gi))
	uuid := devicesT(t, p)[0].UUID
	path := filepath.Join(dir, uuid, "4177-b7cf6c56")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := devicesT(t, p)[0]; d.Used != 0 {
		t.Errorf("used %s, want 0: the claim never held memory", size.Format(d.Used))
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the empty claim is still there: %v", err)
	}
}
