package gpusim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/size"
)

const (
	gi          = uint64(1) << 30
	helperEnv   = "RUNALL_GPU_TEST_HELPER" // set: the test binary is a fake-alloc helper
	helperSize  = "RUNALL_GPU_TEST_SIZE"
	helperLag   = "RUNALL_GPU_TEST_LAG" // its release lag; unset: none
	helperReady = "claimed"
	helperOOM   = "oom"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// helperMain is a fake-alloc process: it claims, says "claimed" (or "oom"), and holds the
// claim until its stdin closes, so that the test decides when claims overlap and end.
func helperMain() int {
	sizes, err := ParseSpec(os.Getenv(EnvGPUs))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	amount, err := size.Parse(os.Getenv(helperSize))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	var lag time.Duration
	if s := os.Getenv(helperLag); s != "" {
		if lag, err = time.ParseDuration(s); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	err = Alloc(context.Background(), AllocOptions{
		Size: amount, Hold: time.Hour, ReleaseLag: lag,
		Devices: os.Getenv(gpu.EnvCUDAVisibleDevices), GPUs: sizes, StateDir: os.Getenv(EnvState),
		Stderr: os.Stderr,
		Sleep: func(context.Context, time.Duration) error {
			fmt.Println(helperReady)
			_, err := io.Copy(io.Discard, os.Stdin)
			return err
		},
	})
	if errors.Is(err, ErrOutOfMemory) {
		fmt.Println(helperOOM)
		return 3
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		spec    string
		want    []Device
		wantErr string
	}{
		{spec: "32GiB,32GiB", want: fakeSizes(32*gi, 32*gi)},
		{spec: " 16GiB , 512MiB ", want: fakeSizes(16*gi, 512<<20)},
		{spec: "2x8GiB,4GiB", want: fakeSizes(8*gi, 8*gi, 4*gi)},
		{spec: "80G", want: fakeSizes(80 * gi)},
		{spec: "2x80GiB:reserve=512MiB", want: []Device{{Total: 80 * gi, Reserve: 512 << 20}, {Total: 80 * gi, Reserve: 512 << 20}}},
		{spec: "16GiB:foreign=4GiB:reserve=1GiB,8GiB", want: []Device{{Total: 16 * gi, Reserve: gi, Foreign: 4 * gi}, {Total: 8 * gi}}},
		{spec: "", wantErr: "empty simulated GPU spec"},
		{spec: "32GiB,", wantErr: "entry 2 is empty"},
		{spec: "32XB", wantErr: "invalid size"},
		{spec: "0GiB", wantErr: "no memory"},
		{spec: "0x8GiB", wantErr: "COUNTxSIZE"},
		{spec: "8GiB:reserv=1GiB", wantErr: "want reserve=SIZE, foreign=SIZE or mps"},
		{spec: "2x80GiB:mps,8GiB", want: []Device{{Total: 80 * gi, MPS: true}, {Total: 80 * gi, MPS: true}, {Total: 8 * gi}}},
		{spec: "8GiB:mpss", wantErr: "or mps after the size"},
		{spec: "8GiB:reserve=lots", wantErr: "reserve:"},
		{spec: "8GiB:reserve=4GiB:foreign=5GiB", wantErr: "exceed the device's 8.0 GiB"},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSpec(%q) error = %v, want one saying %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseSpec(%q) = %v, %v; want %v", tt.spec, got, err, tt.want)
		}
		if back, err := ParseSpec(FormatSpec(got)); err != nil || !slices.Equal(back, got) {
			t.Errorf("FormatSpec(%v) = %q does not read back", got, FormatSpec(got))
		}
	}
}

func openFakeT(t *testing.T, dir string, devs []Device) gpu.Probe {
	t.Helper()
	p, err := Open(Options{Devices: devs, StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func devicesT(t *testing.T, p gpu.Probe) []gpu.Device {
	t.Helper()
	devs, err := p.Devices()
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

func TestDevices(t *testing.T) {
	dir := t.TempDir()
	p := openFakeT(t, dir, fakeSizes(32*gi, 16*gi))
	devs := devicesT(t, p)
	if len(devs) != 2 {
		t.Fatalf("got %d devices, want 2", len(devs))
	}
	for i, d := range devs {
		if d.Index != i || !strings.HasPrefix(d.UUID, fmt.Sprintf("GPU-fake-%d-", i)) || d.Name != "Simulated GPU" ||
			d.Used != 0 || d.Free != d.Total || d.Total != []uint64{32 * gi, 16 * gi}[i] {
			t.Errorf("device %d = %+v", i, d)
		}
	}
	// The same state dir gives the same UUIDs; another gives others.
	if again := devicesT(t, openFakeT(t, dir, fakeSizes(32*gi))); again[0].UUID != devs[0].UUID {
		t.Errorf("UUID changed on reopening the state dir: %s, then %s", devs[0].UUID, again[0].UUID)
	}
	if other := devicesT(t, openFakeT(t, t.TempDir(), fakeSizes(32*gi))); other[0].UUID == devs[0].UUID {
		t.Errorf("two state dirs share UUID %s", other[0].UUID)
	}
	env := p.Env([]int{1})
	want := []string{gpu.EnvCUDAVisibleDevices + "=" + devs[1].UUID, gpu.EnvCUDADeviceOrder + "=PCI_BUS_ID",
		EnvGPUs + "=32GiB,16GiB", EnvState + "=" + dir}
	if !slices.Equal(env, want) {
		t.Errorf("Env = %q, want %q", env, want)
	}
}

func TestAllocRamp(t *testing.T) {
	dir := t.TempDir()
	p := openFakeT(t, dir, fakeSizes(16*gi))
	uuid := devicesT(t, p)[0].UUID
	const size, steps = 10 * gi, 20
	var seen []uint64
	var procs []gpu.Process
	err := Alloc(context.Background(), AllocOptions{
		Size: size, Ramp: 2 * time.Second, Hold: time.Minute,
		Devices: uuid, GPUs: fakeSizes(16 * gi), StateDir: dir,
		Sleep: func(_ context.Context, d time.Duration) error {
			seen = append(seen, devicesT(t, p)[0].Used)
			if d == time.Minute {
				var err error
				procs, err = p.Processes(0)
				return err
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// One look before each of the 20 steps, then one while holding.
	var want []uint64
	for k := range uint64(steps + 1) {
		want = append(want, size*k/steps)
	}
	if !slices.Equal(seen, want) {
		t.Errorf("claim seen growing as %v, want %v", seen, want)
	}
	if len(procs) != 1 || procs[0] != (gpu.Process{PID: uint32(os.Getpid()), Name: "fake-alloc", UsedMemory: size, Local: true}) {
		t.Errorf("processes while holding = %+v", procs)
	}
	if d := devicesT(t, p)[0]; d.Used != 0 {
		t.Errorf("after release: %+v", d)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, uuid, "*")); len(left) != 0 {
		t.Errorf("claim files left: %v", left)
	}
}

// holdUntil returns a Sleep that, at the hold, signals held and then waits for release.
func holdUntil(held chan<- struct{}, release <-chan struct{}) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		if d != time.Hour {
			return nil
		}
		held <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func TestAllocOutOfMemory(t *testing.T) {
	dir := t.TempDir()
	sizes := fakeSizes(10 * gi)
	p := openFakeT(t, dir, sizes)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Alloc(context.Background(), AllocOptions{
			Size: 6 * gi, Hold: time.Hour, Devices: "0", GPUs: sizes, StateDir: dir,
			Sleep: holdUntil(held, release),
		})
	}()
	<-held

	var stderr bytes.Buffer
	err := Alloc(context.Background(), AllocOptions{
		Size: 6 * gi, Ramp: time.Second, Hold: time.Hour, Devices: "0", GPUs: sizes, StateDir: dir, Stderr: &stderr,
		Sleep: func(context.Context, time.Duration) error { return nil },
	})
	if !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("second claim: err = %v, want ErrOutOfMemory", err)
	}
	msg := stderr.String()
	for _, s := range []string{"CUDA out of memory", "GPU 0", "10.0 GiB total capacity", "6.0 GiB already allocated by other processes"} {
		if !strings.Contains(msg, s) {
			t.Errorf("stderr %q does not say %q", msg, s)
		}
	}
	// The failed claim is gone; the first one still holds.
	if d := devicesT(t, p)[0]; d.Used != 6*gi {
		t.Errorf("after the failed claim: used %s, want 6.0 GiB", size.Format(d.Used))
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := devicesT(t, p)[0]; d.Used != 0 {
		t.Errorf("after both: used %s", size.Format(d.Used))
	}
}

func TestAllocSeveralDevices(t *testing.T) {
	dir := t.TempDir()
	sizes := fakeSizes(8*gi, 8*gi, 8*gi)
	p := openFakeT(t, dir, sizes)
	uuids := []string{devicesT(t, p)[2].UUID, devicesT(t, p)[0].UUID}
	var used []uint64
	err := Alloc(context.Background(), AllocOptions{
		Size: 3 * gi, Hold: time.Hour, Devices: strings.Join(uuids, ","), GPUs: sizes, StateDir: dir,
		Sleep: func(context.Context, time.Duration) error {
			for _, d := range devicesT(t, p) {
				used = append(used, d.Used)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{3 * gi, 0, 3 * gi}; !slices.Equal(used, want) {
		t.Errorf("used while holding = %v, want %v", used, want)
	}
}

func TestAllocBadDevices(t *testing.T) {
	dir := t.TempDir()
	sizes := fakeSizes(8*gi, 8*gi)
	for _, tt := range []struct{ devices, want string }{
		{"", "CUDA_VISIBLE_DEVICES is empty"},
		{"2", `"2" is not one of the 2 simulated GPUs`},
		{"GPU-fake-0-00000000", "is not one of"},
		{"1,1", "listed twice"},
	} {
		err := Alloc(context.Background(), AllocOptions{Size: gi, Devices: tt.devices, GPUs: sizes, StateDir: dir})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Devices %q: err = %v, want one saying %q", tt.devices, err, tt.want)
		}
	}
}

func TestAllocCancel(t *testing.T) {
	dir := t.TempDir()
	sizes := fakeSizes(8 * gi)
	p := openFakeT(t, dir, sizes)
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Alloc(ctx, AllocOptions{
			Size: 2 * gi, Hold: time.Hour, Devices: "0", GPUs: sizes, StateDir: dir,
			Sleep: holdUntil(held, nil),
		})
	}()
	<-held
	if d := devicesT(t, p)[0]; d.Used != 2*gi {
		t.Errorf("while holding: used %s", size.Format(d.Used))
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := devicesT(t, p)[0]; d.Used != 0 {
		t.Errorf("after cancel: used %s", size.Format(d.Used))
	}
}

// Claims made all at once by many goroutines, all held until every one has tried, never add
// up to more than the device has: exactly as many fit as can.
func TestAllocConcurrentGoroutines(t *testing.T) {
	dir := t.TempDir()
	sizes := fakeSizes(20 * gi)
	p := openFakeT(t, dir, sizes)
	const n = 16
	var tried sync.WaitGroup
	tried.Add(n)
	var mu sync.Mutex
	fits, ooms := 0, 0
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			err := Alloc(context.Background(), AllocOptions{
				Size: 3 * gi, Hold: time.Hour, Devices: "0", GPUs: sizes, StateDir: dir,
				Sleep: func(context.Context, time.Duration) error {
					if devs, err := p.Devices(); err != nil || devs[0].Used > devs[0].Total {
						t.Errorf("oversubscribed: %+v (%v)", devs, err)
					}
					tried.Done()
					tried.Wait()
					return nil
				},
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				fits++
			case errors.Is(err, ErrOutOfMemory):
				ooms++
				tried.Done()
			default:
				t.Error(err)
				tried.Done()
			}
		})
	}
	wg.Wait()
	if fits != 6 || ooms != n-6 {
		t.Errorf("%d claims of 3 GiB fitted on 20 GiB and %d did not; want 6 and %d", fits, ooms, n-6)
	}
}

type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startHelpers starts n fake-alloc processes claiming size on the trial devices given, and
// returns them once each has said whether its claim fits.
func startHelpers(t *testing.T, n int, env []string) (fit, oom []*helper) {
	t.Helper()
	var all []*helper
	for range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), append([]string{helperEnv + "=1"}, env...)...)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h := &helper{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
		all = append(all, h)
		t.Cleanup(func() { h.cmd.Process.Kill(); h.cmd.Wait() })
	}
	for _, h := range all {
		line, err := h.out.ReadString('\n')
		switch strings.TrimSpace(line) {
		case helperReady:
			fit = append(fit, h)
		case helperOOM:
			oom = append(oom, h)
		default:
			t.Fatalf("helper %d said %q (%v)", h.cmd.Process.Pid, line, err)
		}
	}
	return fit, oom
}

func pids(hs []*helper) []uint32 {
	var out []uint32
	for _, h := range hs {
		out = append(out, uint32(h.cmd.Process.Pid))
	}
	slices.Sort(out)
	return out
}

// Claims from other processes show in the probe, never oversubscribe the device, and vanish
// when their process is killed with SIGKILL, which leaves it no chance to clean up.
func TestAllocProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	sizes := fakeSizes(20*gi, 8*gi)
	p := openFakeT(t, dir, sizes)
	devs := devicesT(t, p)
	env := []string{
		EnvGPUs + "=" + FormatSpec(sizes), EnvState + "=" + dir,
		gpu.EnvCUDAVisibleDevices + "=" + devs[0].UUID, helperSize + "=3GiB",
	}
	fit, oom := startHelpers(t, 10, env)
	if len(fit) != 6 || len(oom) != 4 {
		t.Fatalf("%d claims of 3 GiB fitted on 20 GiB and %d did not; want 6 and 4", len(fit), len(oom))
	}
	for _, h := range oom {
		if err := h.cmd.Wait(); err == nil {
			t.Errorf("helper %d ran out of memory but exited 0", h.cmd.Process.Pid)
		}
	}
	if d := devicesT(t, p)[0]; d.Used != 18*gi || d.Free != 2*gi {
		t.Errorf("device 0 with 6 claims of 3 GiB: %+v", d)
	}
	procs, err := p.Processes(0)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint32
	for _, pr := range procs {
		got = append(got, pr.PID)
	}
	if !slices.Equal(got, pids(fit)) {
		t.Errorf("processes on device 0 = %v, want the helpers holding claims %v", got, pids(fit))
	}

	// SIGKILL one: its claim goes as soon as it is dead.
	victim := fit[0]
	victim.cmd.Process.Kill()
	victim.cmd.Wait()
	if d := devicesT(t, p)[0]; d.Used != 15*gi {
		t.Errorf("after SIGKILL of one: used %s, want 15.0 GiB", size.Format(d.Used))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, devs[0].UUID, fmt.Sprintf("%d-*", victim.cmd.Process.Pid))); len(left) != 0 {
		t.Errorf("dead claim files left: %v", left)
	}

	// The others release theirs and exit 0 when told to.
	for _, h := range fit[1:] {
		h.stdin.Close()
		if err := h.cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v", h.cmd.Process.Pid, err)
		}
	}
	if d := devicesT(t, p)[0]; d.Used != 0 {
		t.Errorf("after all: used %s", size.Format(d.Used))
	}
}

// TestFakePIDs: simulated GPUs report their claimants as NVML does in runall's pid
// namespace, as an older driver does inside a container (numbers that name no process
// here, the same for a claimant every time), or not at all.
func TestPIDs(t *testing.T) {
	dir := t.TempDir()
	sizes := fakeSizes(16 * gi)
	claim := func() func() {
		ctx, cancel := context.WithCancel(context.Background())
		held := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- Alloc(ctx, AllocOptions{Size: gi, Hold: time.Minute, Devices: "0", GPUs: sizes, StateDir: dir,
				Sleep: func(ctx context.Context, d time.Duration) error {
					close(held)
					<-ctx.Done()
					return ctx.Err()
				}})
		}()
		<-held
		return func() { cancel(); <-done }
	}
	release := claim()
	defer release()
	for _, tc := range []struct {
		spec string
		want []gpu.Process
	}{
		{"", []gpu.Process{{PID: uint32(os.Getpid()), Name: "fake-alloc", UsedMemory: gi, Local: true}}},
		{"1", []gpu.Process{{PID: uint32(os.Getpid()) + hostPIDOffset, UsedMemory: gi}}},
		{"none", []gpu.Process{}},
	} {
		mode, err := ParsePIDs(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Open(Options{Devices: sizes, StateDir: dir, PIDs: mode})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the same numbers every time
			procs, err := p.Processes(0)
			if err != nil || !slices.Equal(procs, tc.want) {
				t.Errorf("%s=%q: processes %+v (%v), want %+v", EnvHostPIDs, tc.spec, procs, err, tc.want)
			}
		}
		if d := devicesT(t, p)[0]; d.Used != gi {
			t.Errorf("%q: used %d, want the claim whatever the processes say", tc.spec, d.Used)
		}
	}
	if _, err := ParsePIDs("yes please"); err == nil {
		t.Error("ParsePIDs accepted nonsense")
	}
}

// fakeSizes is simulated GPUs of the given sizes, with no reserve and no foreign process.
func fakeSizes(sizes ...uint64) []Device {
	out := make([]Device, len(sizes))
	for i, s := range sizes {
		out[i] = Device{Total: s}
	}
	return out
}
