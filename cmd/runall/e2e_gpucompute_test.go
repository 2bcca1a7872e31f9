// End-to-end tests of simulated GPUs sharing compute: fake-alloc processes training on one
// simulated GPU, alone and together, their step rates measured from outside.

package main_test

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
)

// trainers starts n `runall fake-alloc` processes at once on GPU 0 of spec, each training
// `steps` steps of stepTime with the given extra flags, and returns how long each trained
// (from its first progress update to its last: a process's start-up, seconds under -race on
// a loaded machine, is no part of its steps) and what each wrote to stderr.
func (e *e2e) trainers(spec string, n, steps int, stepTime time.Duration, flags ...string) ([]time.Duration, []string) {
	e.t.Helper()
	took, stderr := make([]time.Duration, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		args := append([]string{"fake-alloc", "--size", "1GiB", "--ramp", "0", "--release-lag", "0",
			"--train-steps", fmt.Sprint(steps), "--step-time", stepTime.String()}, flags...)
		cmd := exec.Command(runallBin, args...)
		cmd.Dir = e.dir
		cmd.Env = append(slices.Clone(e.env), "RUNALL_FAKE_GPUS="+spec, "CUDA_VISIBLE_DEVICES=0")
		out := &timedWriter{}
		cmd.Stderr = out
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmd.Run()
			took[i], stderr[i] = out.last.Sub(out.first), out.b.String()
			if err != nil {
				e.t.Errorf("fake-alloc %v: %v\n%s", args, err, stderr[i])
			}
		}()
	}
	wg.Wait()
	return took, stderr
}

// timedWriter keeps what is written to it and when it was first and last written to.
type timedWriter struct {
	mu          sync.Mutex
	b           strings.Builder
	first, last time.Time
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if w.first.IsZero() {
		w.first = now
	}
	w.last = now
	return w.b.Write(p)
}

// TestFakeAllocComputeShared: two processes that keep the GPU busy each take about twice as
// long beside each other plus the switching; two that leave it idle most of each step take
// no longer than alone; under MPS, two whose kernels fill half the SMs overlap. Ratios of
// measured wall times, with generous bounds: timing itself is benchmarks' business.
func TestFakeAllocComputeShared(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	const steps, stepTime = 12, 100 * time.Millisecond
	alone, out := e.trainers("32GiB", 1, steps, stepTime, "--busy", "1")
	last := out[0][strings.LastIndex(out[0], "\r")+1:]
	if !strings.HasPrefix(last, "100%|██████████| 12/12 [") || !strings.HasSuffix(last, "it/s]\n") {
		t.Errorf("last progress update %q, want tqdm's 100%%|██████████| 12/12 [...it/s] and a newline", last)
	}
	ratio := func(took []time.Duration) float64 {
		return slices.Max(took).Seconds() / alone[0].Seconds()
	}
	cases := []struct {
		name     string
		spec     string
		flags    []string
		min, max float64
	}{
		{"two busy time-sliced: 2.5x", "32GiB", []string{"--busy", "1"}, 1.8, 3.4},
		{"two light fit in each other's gaps: 1x", "32GiB", []string{"--busy", "0.2"}, 0, 1.4},
		{"two busy on half the SMs under MPS: 1x", "32GiB:mps", []string{"--busy", "1", "--sm", "0.5"}, 0, 1.4},
	}
	for _, c := range cases {
		took, _ := e.trainers(c.spec, 2, steps, stepTime, c.flags...)
		if r := ratio(took); r < c.min || r > c.max {
			t.Errorf("%s: %v against %v alone, %.2fx; want %.1f-%.1fx", c.name, took, alone[0], r, c.min, c.max)
		}
	}

	// A trainer killed outright leaves its GPU as fast as before: its claim's lock went
	// with it, and its compute counts for nothing from then on.
	killed := exec.Command(runallBin, "fake-alloc", "--size", "1GiB", "--ramp", "0", "--release-lag", "5s", "--train-steps", "1000", "--busy", "1")
	killed.Dir = e.dir
	killed.Env = append(slices.Clone(e.env), "RUNALL_FAKE_GPUS=32GiB", "CUDA_VISIBLE_DEVICES=0")
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the trainer to be killed computing", func() bool {
		g := e.listGPUs("32GiB")
		return len(g) == 1 && len(g[0].Processes) == 1 && g[0].Processes[0].SM != nil
	})
	_ = killed.Process.Kill()
	_ = killed.Wait()
	took, _ := e.trainers("32GiB", 1, steps, stepTime, "--busy", "1")
	if r := ratio(took); r > 1.4 {
		t.Errorf("after a busy trainer was killed (its memory lingering): %v against %v alone, %.2fx; want as fast", took, alone[0], r)
	}
}

// TestGPUListUtilization: runall gpus shows what the processes training on a simulated GPU
// compute, as NVML's utilization: each one's share of the time and the device's, the time
// lost to switching between them counted in neither; one that only holds memory shows 0%.
func TestGPUListUtilization(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	const spec = "32GiB"
	start := func(flags ...string) *exec.Cmd {
		cmd := exec.Command(runallBin, append([]string{"fake-alloc", "--size", "1GiB", "--ramp", "0"}, flags...)...)
		cmd.Dir = e.dir
		cmd.Env = append(slices.Clone(e.env), "RUNALL_FAKE_GPUS="+spec, "CUDA_VISIBLE_DEVICES=0")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	light := start("--train-steps", "1000", "--busy", "0.6")
	busy := start("--train-steps", "1000", "--busy", "0.8")
	idle := start("--hold", "60s")
	// 0.6 and 0.8 of 1.4*1.25; the idle one ran no kernel: listed at 0, as a driver samples an
	// idle context.
	want := map[int]uint32{light.Process.Pid: 34, busy.Process.Pid: 46, idle.Process.Pid: 0}
	var last []gpuListed
	eventually.True(t, "both trainers' utilization in runall gpus", func() bool {
		last = e.listGPUs(spec)
		if len(last) != 1 || last[0].Utilization == nil || last[0].Utilization.GPU != 80 || len(last[0].Processes) != 3 {
			return false
		}
		for _, p := range last[0].Processes {
			if w, ok := want[p.PID]; !ok || p.SM == nil || *p.SM != w {
				return false
			}
		}
		return true
	})
	r := e.runGPU("gpus", "--fake-gpus", spec)
	if !strings.Contains(r.stdout, "UTIL") || !strings.Contains(r.stdout, "80%") || !strings.Contains(r.stdout, "46%") {
		t.Errorf("the table shows no utilization\n%v", r)
	}
}

// TestCheckSimulateCompute: check --simulate --busy slows trials packed on a GPU as the
// simulated GPUs do; without --busy it says compute is not modelled.
func TestCheckSimulateCompute(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	file := testdata("gpu/compute.yml")
	for _, c := range []struct {
		spec, busy, want string
	}{
		{"32GiB", "", "Predicted makespan: 21.0s"},      // two at once, then one (their memory freed 1 s after)
		{"32GiB", "1", "Predicted makespan: 36.0s"},     // the pair 2.5x slower, then one alone
		{"32GiB", "0.2", "Predicted makespan: 21.0s"},   // light: no slower together
		{"32GiB:mps", "1", "Predicted makespan: 31.0s"}, // MPS: no switching cost
	} {
		args := []string{"check", "--simulate", "--fake-gpus", c.spec, "--duration", "10s"}
		if c.busy != "" {
			args = append(args, "--busy", c.busy)
		}
		r := e.runGPU(append(args, file)...)
		r.wantCode(t, 0)
		if !strings.Contains(r.stdout, c.want) || !strings.Contains(r.stdout, "compute") {
			t.Errorf("%v: want %q and a note on compute\n%v", args, c.want, r)
		}
	}
	r := e.runGPU("check", "--simulate", "--fake-gpus", "32GiB", "--duration", "10s", "--busy", "2", file)
	if r.code != 2 || !strings.Contains(r.stderr, "--busy") {
		t.Errorf("--busy 2: exit %d, want 2 and an error naming --busy\n%v", r.code, r)
	}
}
