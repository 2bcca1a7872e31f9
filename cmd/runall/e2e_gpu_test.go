// End-to-end tests of GPU admission on simulated GPUs (--fake-gpus): trials claim memory
// with `runall fake-alloc`, and the tests check from the --results file, the output and the
// files trials leave what ran where and how many at once. They assert behaviour, not timing:
// sleeps and holds only make trials overlap, and how many ran at once is read from the
// intervals runall recorded (started before, finished after each trial's process): they can
// only overstate concurrency, never hide it, so "at most N" holds for the processes too; for
// "at least N", trials hold their memory for seconds, far longer than runall's bookkeeping.

package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
)

// gpuCmdTimeout bounds every runall command of these tests.
const gpuCmdTimeout = 90 * time.Second

const gpuGiB = uint64(1) << 30

// newGPUE2E is a scratch directory whose simulated GPU state is its own (newE2E gives each
// test its own RUNALL_FAKE_GPU_STATE), whose PATH holds no runall (so that trials' `runall
// fake-alloc` is the binary under test, which runall adds to their PATH), and where no
// framework setting is inherited from the test's environment.
func newGPUE2E(t *testing.T) *e2e {
	t.Helper()
	e := newE2E(t)
	var env []string
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "TF_FORCE_GPU_ALLOW_GROWTH", "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
			"RUNALL_GPU_MEMORY", "RUNALL_GPU_MEMORY_FRACTION", "CUDA_DEVICE_ORDER", "PYTORCH_CUDA_ALLOC_CONF":
			continue
		case "PATH":
			var dirs []string
			for _, d := range filepath.SplitList(v) {
				if _, err := os.Stat(filepath.Join(d, "runall")); err != nil {
					dirs = append(dirs, d)
				}
			}
			kv = "PATH=" + strings.Join(dirs, string(filepath.ListSeparator))
		}
		env = append(env, kv)
	}
	e.env = env
	return e
}

// runGPU runs runall with args in the working directory, within gpuCmdTimeout.
func (e *e2e) runGPU(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), gpuCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, runallBin, args...)
	cmd.Dir, cmd.Env = e.dir, e.env
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		e.t.Fatalf("runall did not exit by itself within %v\n%v", gpuCmdTimeout, r)
	case errors.Is(err, exec.ErrWaitDelay):
		e.t.Fatalf("runall exited, but something it started kept its stdout open\n%v", r)
	case err == nil || errors.As(err, &exitErr):
		r.code = cmd.ProcessState.ExitCode()
	default:
		e.t.Fatalf("runall: %v\n%v", err, r)
	}
	return r
}

// runGPUFile runs testdata/gpu/FILE on the simulated GPUs of spec, with logs and results in
// the working directory.
func (e *e2e) runGPUFile(file, spec string, rest ...string) result {
	e.t.Helper()
	args := []string{"--fake-gpus", spec, "--log-dir", "logs", "--results", "results.json", testdata(filepath.Join("gpu", file))}
	return e.runGPU(append(args, rest...)...)
}

// gpuResults is the part of the --results file that GPU tests read.
type gpuResults struct {
	Status  string            `json:"status"`
	Tasks   []gpuTaskResult   `json:"tasks"`
	Learned map[string]uint64 `json:"learned_gpu_memory"`
}

type gpuTaskResult struct {
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	ExitCode    int       `json:"exit_code"`
	Attempts    int       `json:"attempts"`
	OOMRequeues int       `json:"oom_requeues"`
	Reason      string    `json:"reason"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
	Devices     []string  `json:"devices"`
	GPUMemory   uint64    `json:"gpu_memory"`
	PeakMemory  uint64    `json:"peak_gpu_memory"`
}

func (e *e2e) gpuResults(name string) gpuResults {
	e.t.Helper()
	b, err := os.ReadFile(e.path(name))
	if err != nil {
		e.t.Fatalf("results file: %v", err)
	}
	var r gpuResults
	if err := json.Unmarshal(b, &r); err != nil {
		e.t.Fatalf("results file: %v\n%s", err, b)
	}
	return r
}

func (r gpuResults) task(t *testing.T, name string) gpuTaskResult {
	t.Helper()
	for _, tr := range r.Tasks {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no task %q in the results", name)
	return gpuTaskResult{}
}

// allOK fails unless every task succeeded at its first attempt without running out of memory.
func (r gpuResults) allOK(t *testing.T) {
	t.Helper()
	for _, tr := range r.Tasks {
		if tr.Status != "ok" || tr.Attempts != 1 || tr.OOMRequeues != 0 {
			t.Errorf("task %q: status %s, %d attempts, %d out-of-memory requeues (%s); want ok at the first attempt",
				tr.Name, tr.Status, tr.Attempts, tr.OOMRequeues, tr.Reason)
		}
	}
}

// gpuOverlap reports whether two tasks ran at the same time.
func gpuOverlap(a, b gpuTaskResult) bool {
	return a.StartedAt.Before(b.FinishedAt) && b.StartedAt.Before(a.FinishedAt)
}

// gpuMostAtOnce is the largest number of tasks whose recorded intervals overlap at one instant.
func gpuMostAtOnce(tasks []gpuTaskResult) int {
	var runs []interval
	for _, tr := range tasks {
		runs = append(runs, interval{tr.StartedAt, tr.FinishedAt})
	}
	return mostAtOnce(runs)
}

func gpuIntervals(tasks []gpuTaskResult) string {
	var b strings.Builder
	var t0 time.Time
	for _, tr := range tasks {
		if t0.IsZero() || tr.StartedAt.Before(t0) {
			t0 = tr.StartedAt
		}
	}
	for _, tr := range tasks {
		fmt.Fprintf(&b, "  %-12s %-7s %6.2fs .. %6.2fs on %v need %.2f GiB\n", tr.Name, tr.Status,
			tr.StartedAt.Sub(t0).Seconds(), tr.FinishedAt.Sub(t0).Seconds(), tr.Devices, float64(tr.GPUMemory)/float64(gpuGiB))
	}
	return b.String()
}

// gpuListed is one device of `runall gpus --json`.
type gpuListed struct {
	Index     int    `json:"index"`
	UUID      string `json:"uuid"`
	Name      string `json:"name"`
	Total     uint64 `json:"total_bytes"`
	Used      uint64 `json:"used_bytes"`
	Free      uint64 `json:"free_bytes"`
	Processes []struct {
		PID  int     `json:"pid"`
		Name string  `json:"name"`
		Used uint64  `json:"used_bytes"`
		SM   *uint32 `json:"sm_percent"`
	} `json:"processes"`
	Utilization *struct {
		GPU uint32 `json:"gpu_percent"`
	} `json:"utilization"`
}

// listGPUs runs `runall gpus --fake-gpus spec --json` in the test's GPU state.
func (e *e2e) listGPUs(spec string) []gpuListed {
	e.t.Helper()
	r := e.runGPU("gpus", "--fake-gpus", spec, "--json")
	r.wantCode(e.t, 0)
	var out struct {
		GPUs []gpuListed `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("runall gpus --json: %v\n%v", err, r)
	}
	return out.GPUs
}

// claimOutside starts `runall fake-alloc` by hand, as another user would, holding size on
// device dev of spec in the test's GPU state, and waits until runall gpus sees the claim.
// The test's cleanup kills it.
func (e *e2e) claimOutside(spec string, dev int, size string) *exec.Cmd {
	e.t.Helper()
	cmd := exec.Command(runallBin, "fake-alloc", "--size", size, "--ramp", "0", "--hold", "60s")
	cmd.Dir = e.dir
	cmd.Env = append(slices.Clone(e.env), "RUNALL_FAKE_GPUS="+spec, "CUDA_VISIBLE_DEVICES="+strconv.Itoa(dev))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	eventually.True(e.t, "the outside fake-alloc's claim to show in runall gpus", func() bool {
		select {
		case <-exited:
			e.t.Fatalf("the outside fake-alloc exited early: %s", out)
		default:
		}
		g := e.listGPUs(spec)
		return len(g) > dev && len(g[dev].Processes) > 0 && g[dev].Processes[0].PID == cmd.Process.Pid
	})
	return cmd
}

func TestGPUPacking(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		most int
	}{
		{"pack7.yml", 4},  // 4 × 7 GiB <= 30.4 GiB (32 GiB less the 5% margin)
		{"pack8.yml", 3},  // 3 × 8 GiB <= 30.4 GiB < 4 × 8 GiB = 32 GiB: the margin counts
		{"pack12.yml", 2}, // 2 × 12 GiB <= 30.4 GiB < 3 × 12 GiB
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			e := newGPUE2E(t)
			r := e.runGPUFile(tc.file, "32GiB")
			r.wantCode(t, 0)
			res := e.gpuResults("results.json")
			res.allOK(t)
			uuid := e.listGPUs("32GiB")[0].UUID
			for _, tr := range res.Tasks {
				if !slices.Equal(tr.Devices, []string{uuid}) {
					t.Errorf("task %q ran on %q, want [%s]", tr.Name, tr.Devices, uuid)
				}
			}
			if got := gpuMostAtOnce(res.Tasks); got != tc.most {
				t.Errorf("at most %d trials ran at once, want %d\n%s", got, tc.most, gpuIntervals(res.Tasks))
			}
		})
	}
}

func TestGPUTwoDevices(t *testing.T) {
	t.Parallel()
	t.Run("spread when one is full", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		const spec = "32GiB,32GiB"
		r := e.runGPUFile("spread.yml", spec)
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		res.allOK(t)
		var uuids []string
		for _, g := range e.listGPUs(spec) {
			uuids = append(uuids, g.UUID)
		}
		trials := slices.DeleteFunc(slices.Clone(res.Tasks), func(tr gpuTaskResult) bool { return tr.Name == "setup" })
		if got := gpuMostAtOnce(trials); got != 4 {
			t.Errorf("at most %d trials ran at once, want all 4\n%s", got, gpuIntervals(trials))
		}
		perDevice := map[string]int{}
		orders := map[string]string{} // trial → its CUDA_DEVICE_ORDER
		for i, tr := range trials {
			// Each env file is "$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER".
			env := append(strings.Fields(e.read(filepath.Join("env", strconv.Itoa(i+1)))), "", "")
			if !slices.Contains(uuids, env[0]) {
				t.Errorf("%s: CUDA_VISIBLE_DEVICES=%q; want one of the UUIDs runall gpus lists, %q", tr.Name, env[0], uuids)
				continue
			}
			if !slices.Equal(tr.Devices, env[:1]) {
				t.Errorf("%s: results say it ran on %q, its CUDA_VISIBLE_DEVICES says %s", tr.Name, tr.Devices, env[0])
			}
			perDevice[env[0]]++
			orders[tr.Name] = env[1]
		}
		for _, u := range uuids {
			if perDevice[u] != 2 {
				t.Errorf("%d trials on %s, want 2 on each GPU (%v)\n%s", perDevice[u], u, perDevice, gpuIntervals(trials))
			}
		}
		t.Run("CUDA_DEVICE_ORDER", func(t *testing.T) {
			// On real GPUs the NVML probe sets it (gpu/nvml.go); simulated GPUs should give
			// trials the same environment.
			for name, order := range orders {
				if order != "PCI_BUS_ID" {
					t.Errorf("%s: CUDA_DEVICE_ORDER=%q, want PCI_BUS_ID as on real GPUs (gpu/gpusim/probe.go: probe.Env does not set it)", name, order)
				}
			}
		})
	})
	t.Run("best fit", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		const spec = "32GiB,16GiB"
		r := e.runGPUFile("bestfit.yml", spec)
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		res.allOK(t)
		g := e.listGPUs(spec)
		small, big := res.task(t, "small"), res.task(t, "big")
		if !slices.Equal(small.Devices, []string{g[1].UUID}) || !slices.Equal(big.Devices, []string{g[0].UUID}) {
			t.Errorf("small ran on %q and big on %q; want small on the 16 GiB GPU %s, big on the 32 GiB GPU %s",
				small.Devices, big.Devices, g[1].UUID, g[0].UUID)
		}
		if !gpuOverlap(small, big) {
			t.Errorf("small and big did not run at once\n%s", gpuIntervals(res.Tasks))
		}
	})
}

func TestGPUReservation(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("reserve.yml", "32GiB")
	r.wantCode(t, 0)
	res := e.gpuResults("results.json")
	res.allOK(t) // no trial was admitted on memory another had yet to allocate
	if got := gpuMostAtOnce(res.Tasks); got != 3 {
		t.Errorf("at most %d trials of 10 GiB ran at once on 32 GiB, want 3\n%s", got, gpuIntervals(res.Tasks))
	}
}

func TestGPUMemoryUsedByOthers(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	e.claimOutside("32GiB", 0, "20GiB")
	r := e.runGPUFile("outside.yml", "32GiB")
	r.wantCode(t, 0)
	// The last trial's memory is given back over its release lag; the outside claim stays.
	eventually.True(t, "GPU 0 to hold the outside claim's 20 GiB alone after the run", func() bool {
		return e.listGPUs("32GiB")[0].Used == 20*gpuGiB
	})
	res := e.gpuResults("results.json")
	res.allOK(t)
	if got := gpuMostAtOnce(res.Tasks); got != 1 {
		t.Errorf("%d trials of 7 GiB ran at once next to 20 GiB used by another process, want 1\n%s", got, gpuIntervals(res.Tasks))
	}
	if !strings.Contains(r.stdout, "waiting: needs 7.0 GiB; GPU0 12.0 GiB free") {
		t.Errorf("no trial waited saying that GPU 0 has 12 GiB free\n%v", r)
	}
}

func TestGPUWaitingIsShown(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("pack12.yml", "32GiB")
	r.wantCode(t, 0)
	if !regexp.MustCompile(`(?m)^\[trial \d\] waiting: needs 12\.0 GiB; GPU0 \S+ GiB free, \S+ GiB reserved( \(.*\))?$`).MatchString(r.stdout) {
		t.Errorf("no line says why a trial waits\n%v", r)
	}
}

func TestGPUOutOfMemory(t *testing.T) {
	t.Parallel()
	t.Run("requeued with a larger need", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		r := e.runGPUFile("oom.yml", "32GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		liar := res.task(t, "liar")
		if liar.Status != "ok" || liar.OOMRequeues < 1 || liar.Attempts != liar.OOMRequeues+1 {
			t.Errorf("liar: status %s, %d attempts, %d out-of-memory requeues (%s); want ok after at least one requeue\n%s",
				liar.Status, liar.Attempts, liar.OOMRequeues, liar.Reason, gpuIntervals(res.Tasks))
		}
		if liar.GPUMemory <= 3*gpuGiB {
			t.Errorf("liar was last admitted with a need of %d bytes, want more than the 3 GiB it declared", liar.GPUMemory)
		}
		for i := 1; i <= 3; i++ {
			if f := res.task(t, fmt.Sprintf("filler %d", i)); f.Status != "ok" || f.Attempts != 1 {
				t.Errorf("%s: %s after %d attempts (%s), want ok at the first", f.Name, f.Status, f.Attempts, f.Reason)
			}
		}
		if !strings.Contains(r.stdout, "[liar] waiting: requeued after running out of GPU memory; now needs ") {
			t.Errorf("the output does not say that liar was requeued\n%v", r)
		}
	})
	t.Run("oom-retries: 0", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		r := e.runGPUFile("oom-noretry.yml", "32GiB")
		r.wantCode(t, 1)
		res := e.gpuResults("results.json")
		liar := res.task(t, "liar")
		if liar.Status != "failed" || liar.Attempts != 1 || liar.OOMRequeues != 0 {
			t.Errorf("liar: status %s, %d attempts, %d out-of-memory requeues; want failed at the first attempt, never requeued",
				liar.Status, liar.Attempts, liar.OOMRequeues)
		}
	})
	t.Run("asking for more than any device has", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		r := e.runGPUFile("oom-huge.yml", "32GiB")
		r.wantCode(t, 1)
		huge := e.gpuResults("results.json").task(t, "huge")
		if huge.Status != "failed" || huge.Attempts != 1 || huge.OOMRequeues != 0 || !strings.Contains(huge.Reason, "the largest GPU gives 30.4 GiB") {
			t.Errorf("huge: status %s, %d attempts, %d requeues, reason %q; want failed at once, naming the largest device",
				huge.Status, huge.Attempts, huge.OOMRequeues, huge.Reason)
		}
	})
	t.Run("a setup step, not a trial", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		r := e.runGPUFile("oom-setup.yml", "8GiB")
		r.wantCode(t, 0)
		res := e.gpuResults("results.json")
		s := res.task(t, "setup on gpu")
		if s.Status != "ok" || s.OOMRequeues != 1 || s.Attempts != 2 || s.GPUMemory <= 2*gpuGiB {
			t.Errorf("setup on gpu: status %s, %d attempts, %d requeues, need %d bytes; want ok after one requeue with more than 2 GiB",
				s.Status, s.Attempts, s.OOMRequeues, s.GPUMemory)
		}
		if _, err := os.Stat(e.path("after-ran")); err != nil {
			t.Errorf("the task after the requeued setup step did not run: %v\n%v", err, r)
		}
	})
	// A trial that runall did not place on a GPU fails like any other when it prints an
	// out-of-memory message; a GPU trial is requeued oom-retries (2) times, then fails.
	for _, tc := range []struct {
		name        string
		flags       []string
		gpuRequeues int
	}{
		{"plain trial next to a GPU trial", nil, 2},
		{"--no-gpu", []string{"--no-gpu"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newGPUE2E(t)
			r := e.runGPUFile("oom-plain.yml", "32GiB", tc.flags...)
			r.wantCode(t, 1)
			res := e.gpuResults("results.json")
			if p := res.task(t, "plain"); p.Status != "failed" || p.ExitCode != 1 || p.Attempts != 1 || p.OOMRequeues != 0 {
				t.Errorf("plain: status %s, exit code %d, %d attempts, %d requeues; want failed with exit code 1 at once, never requeued",
					p.Status, p.ExitCode, p.Attempts, p.OOMRequeues)
			}
			if g := res.task(t, "gpu"); g.Status != "failed" || g.OOMRequeues != tc.gpuRequeues || g.Attempts != tc.gpuRequeues+1 {
				t.Errorf("gpu: status %s, %d attempts, %d requeues; want failed after %d requeues",
					g.Status, g.Attempts, g.OOMRequeues, tc.gpuRequeues)
			}
		})
	}
}

func TestGPULearnedMemory(t *testing.T) {
	t.Parallel()
	for _, pids := range gpuPIDModes {
		t.Run(pids.name, func(t *testing.T) {
			t.Parallel()
			testGPULearnedMemory(t, pids)
		})
	}
}

// testGPULearnedMemory: the group's siblings wait for the learner whatever the driver
// reports; tasks of other groups may run beside it only where its own processes are measured.
func testGPULearnedMemory(t *testing.T, pids gpuPIDMode) {
	e := newGPUE2E(t)
	e.setPIDMode(pids)
	r := e.runGPUFile("learn.yml", "32GiB")
	r.wantCode(t, 0)
	res := e.gpuResults("results.json")
	res.allOK(t)
	first, group := res.Tasks[0], res.Tasks[:6] // trial 1..6; then "other"
	for _, tr := range res.Tasks[1:] {
		if gpuOverlap(first, tr) && (tr.Name != "other" || pids.env == "none") {
			t.Errorf("%s ran while %s, the trial that learns the group's need, ran\n%s", tr.Name, first.Name, gpuIntervals(res.Tasks))
		}
	}
	if got := gpuMostAtOnce(group[1:]); got < 2 {
		t.Errorf("at most %d trials ran at once after learning, want at least 2\n%s", got, gpuIntervals(res.Tasks))
	}
	learned, ok := res.Learned[first.Name]
	if !ok {
		t.Fatalf("learned_gpu_memory = %v; want one for %q", res.Learned, first.Name)
	}
	wantSettled(t, first.Name+" (learned)", learned, 6*gpuGiB)
	if first.GPUMemory != learned {
		t.Errorf("%s: results report a need of %d bytes, want the %d it learned", first.Name, first.GPUMemory, learned)
	}
	for _, tr := range group[1:] {
		if tr.GPUMemory != learned {
			t.Errorf("%s was admitted needing %d bytes, want the learned %d", tr.Name, tr.GPUMemory, learned)
		}
	}

	// A second run of the file with the same log directory starts from what was learned.
	r = e.runGPU("--fake-gpus", "32GiB", "--log-dir", "logs", "--results", "results2.json", testdata("gpu/learn.yml"))
	r.wantCode(t, 0)
	res2 := e.gpuResults("results2.json")
	res2.allOK(t)
	// No trial learns again: all of the group may run at once (in whichever order the
	// durations recorded by the first run put them), each with the need learned before.
	group2 := res2.Tasks[:6]
	firstOf := slices.MinFunc(group2, func(a, b gpuTaskResult) int { return a.StartedAt.Compare(b.StartedAt) })
	if !slices.ContainsFunc(group2, func(tr gpuTaskResult) bool { return tr.Name != firstOf.Name && gpuOverlap(firstOf, tr) }) {
		t.Errorf("second run: %s, the group's first trial, ran without its siblings: it learned again\n%s", firstOf.Name, gpuIntervals(res2.Tasks))
	}
	for _, tr := range res2.Tasks[:6] {
		if tr.GPUMemory != learned {
			t.Errorf("second run: %s was admitted needing %d bytes, want the %d learned before", tr.Name, tr.GPUMemory, learned)
		}
	}
}

func TestGPUNeverFits(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("toobig.yml", "32GiB,32GiB")
	r.wantCode(t, 1)
	res := e.gpuResults("results.json")
	for _, tc := range []struct{ name, reason, file string }{
		{"too big", "the largest GPU has 32.0 GiB", "ran-too-big"},
		{"not after the margin", "the largest GPU has 32.0 GiB", "ran-not-after-the-margin"},
		{"too many GPUs", "asks for 3 GPUs, 2 are visible", "ran-too-many-gpus"},
	} {
		tr := res.task(t, tc.name)
		if tr.Status != "failed" || !strings.Contains(tr.Reason, tc.reason) {
			t.Errorf("%s: %s (%q); want failed, saying %q", tc.name, tr.Status, tr.Reason, tc.reason)
		}
		if e.exists(tc.file) {
			t.Errorf("%s ran", tc.name)
		}
	}
	if tr := res.task(t, "fits"); tr.Status != "ok" || !e.exists("ran-fits") {
		t.Errorf("fits: %s; want ok: trials that cannot run must not hold up the rest", tr.Status)
	}
}

func TestGPUWithoutNVML(t *testing.T) {
	t.Parallel()
	t.Run("refuses to start", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		// No --fake-gpus; NVIDIA_VISIBLE_DEVICES=none hides the GPUs of a machine that has some.
		e.env = append(e.env, "NVIDIA_VISIBLE_DEVICES=none")
		r := e.runGPU("--log-dir", "logs", testdata("gpu/nonvml.yml"))
		if r.code == 0 {
			t.Fatalf("runall succeeded without a GPU\n%v", r)
		}
		if e.exists("setup.done") || e.exists("trial.done") {
			t.Error("a task ran: runall must stop before running anything")
		}
		for _, s := range []string{"--no-gpu", "--fake-gpus"} {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("stderr does not mention %s\n%v", s, r)
			}
		}
	})
	t.Run("--no-gpu", func(t *testing.T) {
		t.Parallel()
		e := newGPUE2E(t)
		e.env = append(e.env, "NVIDIA_VISIBLE_DEVICES=none")
		r := e.runGPU("--no-gpu", "--log-dir", "logs", testdata("gpu/nonvml.yml"))
		r.wantCode(t, 0)
		if !e.exists("setup.done") || !e.exists("trial.done") {
			t.Errorf("with --no-gpu, not every task ran\n%v", r)
		}
	})
}

func TestGPUList(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	const spec = "32GiB,16GiB"
	row := func(i int, total, used, free string) string {
		return fmt.Sprintf(`%d +GPU-fake-%d-\w+ +Simulated GPU +%s +%s +%s +ok +0%% +none`,
			i, i, regexp.QuoteMeta(total), regexp.QuoteMeta(used), regexp.QuoteMeta(free))
	}
	has := func(out string, pattern string) bool {
		return regexp.MustCompile(`(?m)^` + pattern + `$`).MatchString(out)
	}
	r := e.runGPU("gpus", "--fake-gpus", spec)
	r.wantCode(t, 0)
	for _, re := range []string{row(0, "32.0 GiB", "0 B", "32.0 GiB"), row(1, "16.0 GiB", "0 B", "16.0 GiB")} {
		if !has(r.stdout, re) {
			t.Errorf("no line matches %s\n%v", re, r)
		}
	}

	outside := e.claimOutside(spec, 1, "5GiB")
	r = e.runGPU("gpus", "--fake-gpus", spec)
	r.wantCode(t, 0)
	// It computes nothing: the driver lists it at 0%, as it samples an idle context.
	proc := fmt.Sprintf(`%s\n +pid %d +fake-alloc \(here\) +5\.0 GiB +0%%`, row(1, "16.0 GiB", "5.0 GiB", "11.0 GiB"), outside.Process.Pid)
	if !has(r.stdout, row(0, "32.0 GiB", "0 B", "32.0 GiB")) || !has(r.stdout, proc) {
		t.Errorf("want GPU 1 with 5 GiB used by the fake-alloc process %d under it, GPU 0 untouched\n%v", outside.Process.Pid, r)
	}
	if !strings.Contains(r.stdout, "Process IDs are this pid namespace's") {
		t.Errorf("no word on whose process IDs these are\n%v", r)
	}

	// As a container on an older driver sees it: the host's PIDs, which name nothing here.
	e.env = append(e.env, "RUNALL_FAKE_HOST_PIDS=1")
	r = e.runGPU("gpus", "--fake-gpus", spec)
	r.wantCode(t, 0)
	hostPID := regexp.MustCompile(`(?m)^ +pid (\d+) +\? +5\.0 GiB +0%$`).FindStringSubmatch(r.stdout)
	if hostPID == nil || hostPID[1] == strconv.Itoa(outside.Process.Pid) || !strings.Contains(r.stdout, "by the order they appear") {
		t.Errorf("with RUNALL_FAKE_HOST_PIDS=1, want a process that is not here and a note on tying by order\n%v", r)
	}
}

func TestGPUFrameworkEnv(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	r := e.runGPUFile("env.yml", "32GiB")
	r.wantCode(t, 0)
	const mem = "RUNALL_GPU_MEMORY=8589934592 RUNALL_GPU_MEMORY_FRACTION=0.250"
	wantLines(t, r,
		"[defaults] TF_FORCE_GPU_ALLOW_GROWTH=true XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=unset "+mem,
		"[own env] TF_FORCE_GPU_ALLOW_GROWTH=false XLA_PYTHON_CLIENT_PREALLOCATE=true XLA_PYTHON_CLIENT_MEM_FRACTION=unset "+mem,
		"[capped] TF_FORCE_GPU_ALLOW_GROWTH=true XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=0.250 "+mem,
	)
}

// TestGPULearnedNeedSurvivesEdits: a learned need belongs to its sweep, not to a line of the
// file. Lines inserted above the sweep keep it; renaming the sweep drops it, and says so.
func TestGPULearnedNeedSurvivesEdits(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	orig, err := os.ReadFile(testdata("gpu/learn.yml"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(content, results string) (result, gpuResults) {
		t.Helper()
		if err := os.WriteFile(e.path("tasks.yml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.runGPU("--fake-gpus", "32GiB", "--log-dir", "logs", "--results", results, "tasks.yml")
		r.wantCode(t, 0)
		res := e.gpuResults(results)
		res.allOK(t)
		return r, res
	}
	_, first := run(string(orig), "first.json")
	learned := first.Learned[first.Tasks[0].Name]
	if learned == 0 || first.Tasks[0].GPUMemory != learned { // the learner reports what it learned
		t.Fatalf("first run did not learn: %+v", first)
	}

	inserted := strings.Replace(string(orig), "tasks:\n", "tasks:\n  - name: setup\n    cmd: 'true'\n\n", 1)
	_, second := run(inserted, "second.json")
	if got := second.Tasks[1].GPUMemory; got != learned { // Tasks[0] is the new setup step
		t.Errorf("after inserting lines above the sweep, %s was admitted needing %d bytes, want the %d learned before",
			second.Tasks[1].Name, got, learned)
	}

	renamed := strings.Replace(inserted, "- name: trials\n", "- name: sweep\n", 1)
	r, third := run(renamed, "third.json")
	if !strings.Contains(r.stdout, "dropped") || !strings.Contains(r.stdout, first.Tasks[0].Name) {
		t.Errorf("renaming the sweep did not say that its learned need was dropped\n%v", r)
	}
	if _, relearned := third.Learned[third.Tasks[1].Name]; !relearned {
		t.Errorf("after renaming the sweep, %s did not learn its need again: learned %v", third.Tasks[1].Name, third.Learned)
	}
}

// fake-alloc's flags: what it holds is said once (--size or --steps), each flag is checked,
// and a mistake is a usage error that says what to give instead.
func TestFakeAllocUsage(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	e.env = append(e.env, "RUNALL_FAKE_GPUS=8GiB", "CUDA_VISIBLE_DEVICES=0")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--size or --steps is required"},
		{[]string{"--size", "1GiB", "--steps", "1GiB@1s"}, "give one"},
		{[]string{"--steps", "1GiB@1s", "--ramp", "2s"}, "each step gives the total and its time"},
		{[]string{"--steps", "2GiB@2s,1GiB@1s"}, "list steps in time order"},
		{[]string{"--size", "1GiB", "--profile", "caffe"}, "want pytorch, tensorflow, jax or linear"},
		{[]string{"--size", "1GiB", "--profile", "linear", "--context", "1GiB"}, "linear has no context"},
		{[]string{"--size", "1GiB", "--spike", "1GiB@1s"}, "SIZE@TIME+DURATION"},
		{[]string{"--size", "1GiB", "--release-lag", "-1s"}, "cannot be negative"},
		{[]string{"--size", "1GiB", "--busy", "0.5"}, "give --train-steps N too"},
		{[]string{"--size", "1GiB", "--train-steps", "5", "--busy", "1.5"}, "busy share 1.5"},
		{[]string{"--size", "1GiB", "--train-steps", "5", "--step-time", "0s"}, "step time of more than 0"},
		{[]string{"--size", "1GiB", "--train-steps", "-1"}, "cannot be negative"},
	} {
		r := e.runGPU(append([]string{"fake-alloc"}, tc.args...)...)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("fake-alloc %q: stderr does not say %q\n%v", tc.args, tc.want, r)
		}
	}
	// A claim beyond the GPU fails as PyTorch does, and exits 1.
	r := e.runGPU("fake-alloc", "--size", "9GiB", "--ramp", "0", "--hold", "0")
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ") {
		t.Errorf("a claim beyond the GPU does not fail as PyTorch does\n%v", r)
	}
}
