package gpusim

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
)

func TestParseFaults(t *testing.T) {
	good := []struct {
		spec string
		want []Injection
	}{
		{"32GiB,32GiB", nil},
		{"32GiB,32GiB:xid=79@30s", []Injection{{Device: 1, Kind: gpu.FaultXid, Xid: 79, After: 30 * time.Second}}},
		{"2x16GiB:ecc@1m:mps,8GiB:pending-retirement@0s:reserve=1GiB", []Injection{
			{Device: 0, Kind: gpu.FaultECC, After: time.Minute},
			{Device: 1, Kind: gpu.FaultECC, After: time.Minute},
			{Device: 2, Kind: gpu.FaultPendingRetirement},
		}},
		{"8GiB:xid=13@1s:xid=48@2s", []Injection{
			{Kind: gpu.FaultXid, Xid: 13, After: time.Second},
			{Kind: gpu.FaultXid, Xid: 48, After: 2 * time.Second},
		}},
	}
	for _, tt := range good {
		got, err := ParseFaults(tt.spec)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseFaults(%q) = %+v, %v; want %+v", tt.spec, got, err, tt.want)
		}
		if _, err := ParseSpec(tt.spec); err != nil {
			t.Errorf("ParseSpec(%q): %v", tt.spec, err)
		}
	}
	devs, _ := ParseSpec("2x16GiB:ecc@1m:mps")
	if !devs[0].MPS || !devs[1].MPS {
		t.Errorf("a fault beside :mps lost it: %+v", devs)
	}
	bad := []string{
		"32GiB:xid=abc@30s", "32GiB:xid=79", "32GiB:xid=79@-1s", "32GiB:xid=79@soon", "32GiB:xid=0@1s",
		"32GiB:xid@3s", "32GiB:ecc=2@1s", "32GiB:pending-retirement", "32GiB:ecc",
	}
	for _, spec := range bad {
		_, err := ParseSpec(spec)
		if err == nil || !strings.Contains(err.Error(), "xid=79@30s") {
			t.Errorf("ParseSpec(%q) = %v, want an error showing the form (xid=79@30s)", spec, err)
		}
		if _, err := ParseFaults(spec); err == nil {
			t.Errorf("ParseFaults(%q): no error", spec)
		}
	}
	if _, err := ParseSpec("32GiB:pending"); err == nil || !strings.Contains(err.Error(), "pending-retirement@T") {
		t.Errorf("an unknown option's error does not name the faults: %v", err)
	}
}

// TestSimulatedHealth: an armed fault shows in the health read once the state's clock
// passes its time, not before, on its GPU only, and to any probe over the directory.
func TestSimulatedHealth(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(16*gi, 16*gi)
	t0 := time.Unix(1_000_000, 0)
	faults, err := ParseFaults("16GiB,16GiB:xid=79@30s:pending-retirement@10s:ecc@20s")
	if err != nil {
		t.Fatal(err)
	}
	if err := ArmFaults(Options{Devices: devs, StateDir: dir}, faults, t0); err != nil {
		t.Fatal(err)
	}
	p := openFakeT(t, dir, devs).(*probe) // a later probe, as runall gpus opens
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{0, "ok"},
		{10*time.Second - time.Nanosecond, "ok"},
		{10 * time.Second, "pages pending retirement"},
		{20 * time.Second, "pages pending retirement, 1 uncorrectable ECC error(s)"},
		{30 * time.Second, "xid 79 (GPU has fallen off the bus), pages pending retirement, 1 uncorrectable ECC error(s)"},
	} {
		p.st.now = func() time.Time { return t0.Add(tc.at) }
		h1, err := p.Health(1)
		if err != nil || h1.String() != tc.want {
			t.Errorf("at %v: gpu 1 = %q, %v; want %q", tc.at, h1, err, tc.want)
		}
		if h0, err := p.Health(0); err != nil || h0.String() != "ok" {
			t.Errorf("at %v: gpu 0 = %q, %v; want ok", tc.at, h0, err)
		}
	}
	if h, _ := p.Health(1); len(h.Xids) != 1 || !h.Xids[0].At.Equal(t0.Add(30*time.Second)) {
		t.Errorf("xids = %+v, want Xid 79 at its time", h.Xids)
	}
	// A run whose spec has no faults clears them.
	if err := ArmFaults(Options{Devices: devs, StateDir: dir}, nil, t0); err != nil {
		t.Fatal(err)
	}
	if h, err := p.Health(1); err != nil || h.String() != "ok" {
		t.Errorf("after a run without faults: %q, %v; want ok", h, err)
	}
	if _, err := p.Health(2); err == nil {
		t.Error("Health(2) of 2 GPUs: no error")
	}
}

// TestKilling: a fault that kills everything ends any process on its GPU, one started
// after it too; a memory error only those that ran when it happened; neither a process on
// another GPU, nor before its time.
func TestKilling(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(16*gi, 16*gi)
	t0 := time.Unix(1_000_000, 0)
	st, err := openState(dir, devs)
	if err != nil {
		t.Fatal(err)
	}
	arm := func(spec string) {
		t.Helper()
		fs, err := ParseFaults(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := ArmFaults(Options{Devices: devs, StateDir: dir}, fs, t0); err != nil {
			t.Fatal(err)
		}
	}
	s := time.Second
	for _, tc := range []struct {
		spec       string
		devs       []int
		start, now time.Duration
		want       bool
	}{
		{"16GiB,16GiB:xid=79@10s", []int{1}, 0, 10 * s, true},
		{"16GiB,16GiB:xid=79@10s", []int{1}, 0, 9 * s, false},
		{"16GiB,16GiB:xid=79@10s", []int{1}, 20 * s, 20 * s, true}, // started after: dies too
		{"16GiB,16GiB:xid=79@10s", []int{0}, 0, 20 * s, false},     // another GPU
		{"16GiB,16GiB:xid=48@10s", []int{1}, 0, 10 * s, true},
		{"16GiB,16GiB:xid=48@10s", []int{1}, 11 * s, 20 * s, false}, // started after the error
		{"16GiB,16GiB:xid=94@10s", []int{0, 1}, 0, 10 * s, true},
		{"16GiB,16GiB:ecc@10s", []int{1}, 0, 10 * s, true},
		{"16GiB,16GiB:xid=13@10s", []int{1}, 0, 10 * s, false}, // ends the app that caused it: not named
		{"16GiB,16GiB:pending-retirement@10s", []int{1}, 0, 10 * s, false},
	} {
		arm(tc.spec)
		_, got, err := killing(st, tc.devs, t0.Add(tc.start), t0.Add(tc.now))
		if err != nil || got != tc.want {
			t.Errorf("%s, process on %v started at %v, at %v: kills %v, %v; want %v", tc.spec, tc.devs, tc.start, tc.now, got, err, tc.want)
		}
	}
}

// TestFakeAllocKilledByXid: a fake-alloc holding memory on a GPU ends when a killing Xid is
// armed there, saying what the driver logged; after Xid 79 a new one on that GPU fails at
// once, while one on the other GPU runs.
func TestFakeAllocKilledByXid(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(16*gi, 16*gi)
	var stderr bytes.Buffer
	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Alloc(context.Background(), AllocOptions{Size: gi, Hold: time.Hour, Devices: "1", GPUs: devs, StateDir: dir,
			Stderr: &stderr,
			Sleep: func(ctx context.Context, d time.Duration) error {
				close(held)
				<-ctx.Done() // held until a fault ends it: the test has no other way out
				return ctx.Err()
			}})
	}()
	<-held
	faults, err := ParseFaults("16GiB,16GiB:xid=79@0s")
	if err != nil {
		t.Fatal(err)
	}
	if err := ArmFaults(Options{Devices: devs, StateDir: dir}, faults, time.Now()); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, ErrGPUFault) || !strings.Contains(err.Error(), "xid 79") {
		t.Fatalf("Alloc = %v, want the Xid 79 fault", err)
	}
	if want := "kernel: NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
	err = Alloc(context.Background(), AllocOptions{Size: gi, Devices: "1", GPUs: devs, StateDir: dir})
	if !errors.Is(err, ErrGPUFault) {
		t.Errorf("a fake-alloc started on a GPU after Xid 79 = %v, want the fault", err)
	}
	if err := Alloc(context.Background(), AllocOptions{Size: gi, Devices: "0", GPUs: devs, StateDir: dir}); err != nil {
		t.Errorf("a fake-alloc on the other GPU = %v, want it to run", err)
	}
}

// TestFakeAllocKilledByECC: a memory error ends the process that was on the GPU with
// CUDA's error, and a process started after it runs.
func TestFakeAllocKilledByECC(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(16 * gi)
	var stderr bytes.Buffer
	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Alloc(context.Background(), AllocOptions{Size: gi, Hold: time.Hour, Devices: "0", GPUs: devs, StateDir: dir,
			Stderr: &stderr,
			Sleep: func(ctx context.Context, d time.Duration) error {
				close(held)
				<-ctx.Done()
				return ctx.Err()
			}})
	}()
	<-held
	faults, _ := ParseFaults("16GiB:xid=48@0s")
	if err := ArmFaults(Options{Devices: devs, StateDir: dir}, faults, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrGPUFault) {
		t.Fatalf("Alloc = %v, want the Xid 48 fault", err)
	}
	if !strings.Contains(stderr.String(), "48, An uncorrectable double bit error (DBE) has been detected on GPU") ||
		!strings.Contains(stderr.String(), "RuntimeError: CUDA error: uncorrectable ECC error encountered") {
		t.Errorf("stderr = %q, want the driver's line and CUDA's error", stderr.String())
	}
	if err := Alloc(context.Background(), AllocOptions{Size: gi, Devices: "0", GPUs: devs, StateDir: dir}); err != nil {
		t.Errorf("a fake-alloc started after the memory error = %v, want it to run", err)
	}
}
