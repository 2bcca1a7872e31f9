package gpusim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/internal/eventually"
)

// trainT starts an Alloc on GPU 0 of devs that trains with the given load until the test
// ends (its steps last an hour), and waits until the probe counts want processes computing.
func trainT(t *testing.T, p gpu.Probe, dir string, devs []Device, l Load, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Alloc(ctx, AllocOptions{Size: gi, Devices: "0", GPUs: devs, StateDir: dir,
			Train: Train{Steps: 2, StepTime: time.Hour, Busy: l.Busy, SM: l.SM}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Alloc ended with %v, want it cancelled", err)
		}
	})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		procs, err := p.ProcessUtilization(0)
		if err != nil {
			t.Fatal(err)
		}
		if computing(procs) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes computing after 5 s, want %d", computing(procs), want)
		}
	}
}

// computing counts the processes whose kernels ran.
func computing(procs []gpu.ProcessUtilization) int {
	n := 0
	for _, p := range procs {
		if p.SM > 0 {
			n++
		}
	}
	return n
}

// TestProbeUtilization: the simulated GPU reports what its processes compute as NVML would,
// from the model; a process that only holds memory, or has died, counts for nothing.
func TestProbeUtilization(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(32 * gi)
	p := openFakeT(t, dir, devs)
	if u, err := p.Utilization(0); err != nil || u.GPU != 0 {
		t.Fatalf("idle: %+v, %v; want 0%%", u, err)
	}
	// A claim whose owner died while computing: nobody holds its lock.
	uuid := devicesT(t, p)[0].UUID
	if err := os.MkdirAll(filepath.Join(dir, uuid), 0o755); err != nil {
		t.Fatal(err)
	}
	dead := claimFile{size: gi, load: Load{Busy: 1, SM: 1}}.encode()
	if err := os.WriteFile(filepath.Join(dir, uuid, "999999-dead"), dead, 0o644); err != nil {
		t.Fatal(err)
	}
	trainT(t, p, dir, devs, Load{Busy: 0.5, SM: 1}, 1)
	u, err := p.Utilization(0)
	procs, _ := p.ProcessUtilization(0)
	want := []gpu.ProcessUtilization{{PID: uint32(os.Getpid()), SM: 50}}
	if err != nil || u.GPU != 50 || !slices.Equal(procs, want) {
		t.Errorf("one at busy 0.5 beside a dead one: device %+v, processes %+v, %v; want 50%% and %+v", u, err, procs, want)
	}
	trainT(t, p, dir, devs, Load{Busy: 1, SM: 1}, 2)
	u, _ = p.Utilization(0)
	procs, _ = p.ProcessUtilization(0)
	// busy 1.5, twice switched: each stretched 1.5*1.25 = 1.875 times.
	if u.GPU != percent(1.5/1.875) || len(procs) != 2 || procs[0].SM+procs[1].SM != percent(0.5/1.875)+percent(1/1.875) {
		t.Errorf("0.5 and 1 time-sliced: device %+v, processes %+v; want %d%%", u, procs, percent(1.5/1.875))
	}
}

// TestProbeUtilizationListsAnIdleProcessAtZero: a process that holds memory and computes
// nothing is listed with its kernels' share 0, as a driver samples an idle context: runall
// then knows its trial keeps the GPU busy none of the time (issue 42, point 4).
func TestProbeUtilizationListsAnIdleProcessAtZero(t *testing.T) {
	dir := t.TempDir()
	devs := fakeSizes(32 * gi)
	p := openFakeT(t, dir, devs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Alloc(ctx, AllocOptions{Size: gi, Hold: time.Hour, Devices: "0", GPUs: devs, StateDir: dir})
	}()
	defer func() {
		cancel()
		<-done
	}()
	want := []gpu.ProcessUtilization{{PID: uint32(os.Getpid()), SM: 0}}
	var procs []gpu.ProcessUtilization
	eventually.Until(eventually.Limit, func() bool {
		procs, _ = p.ProcessUtilization(0)
		return len(procs) > 0
	})
	if !slices.Equal(procs, want) {
		t.Errorf("a process that only holds memory: %+v, want %+v", procs, want)
	}
}
