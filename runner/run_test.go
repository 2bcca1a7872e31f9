package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/gpu/gpusim"
	"github.com/runall/runall/report"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// These tests run the scheduler in-process (under -race in make test) on small task files;
// the end-to-end tests in cmd/runall run the binary.

// runFile loads content as a task file in a scratch directory and runs it.
func runFile(t testing.TB, content string, opts Options) (*results.Run, string, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts.Output.Stdout = &out
	opts.Record.LogDir = filepath.Join(dir, "logs")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Record.Report == nil {
		opts.Record.Report = report.WriteRun
	}
	opts.Environ = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "RUNALL_TEST_BIN=" + self}, opts.Environ...)
	res, err := Run(p, opts)
	return res, out.String(), err
}

func byName(res *results.Run) map[string]results.Task {
	m := map[string]results.Task{}
	for _, r := range res.Tasks {
		m[r.Name] = r
	}
	return m
}

// mostAtOnce is the most tasks whose recorded intervals overlap.
func mostAtOnce(tasks []results.Task) int {
	most := 0
	for _, a := range tasks {
		n := 0
		for _, b := range tasks {
			if !b.StartedAt.After(a.StartedAt) && b.FinishedAt.After(a.StartedAt) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func TestRunSequenceExportsAndStops(t *testing.T) {
	res, out, err := runFile(t, `
tasks:
  - name: set
    cmd: export GREETING=hello
  - name: use
    cmd: test "$GREETING" = hello
  - name: fail
    cmd: exit 3
  - name: after
    cmd: 'true'
`, Options{})
	if !errors.Is(err, ErrTaskFailed) {
		t.Fatalf("err = %v, want ErrTaskFailed\n%s", err, out)
	}
	got := byName(res)
	if got["set"].Status != results.StatusOK || got["use"].Status != results.StatusOK {
		t.Errorf("the exported variable did not reach the next task: %+v", got["use"])
	}
	if f := got["fail"]; f.Status != results.StatusFailed || f.ExitCode != 3 {
		t.Errorf("fail: %+v", f)
	}
	if a := got["after"]; a.Status != results.StatusSkipped || !strings.Contains(a.Reason, "stop-on-failure") {
		t.Errorf("after: %+v, want skipped by stop-on-failure", a)
	}
}

func TestRunBlockRespectsMaxParallel(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 2}
tasks:
  - name: block
    parallel-tasks:
      - name: t<replace>
        cmd: sleep 0.2
        for-each: [1, 2, 3, 4, 5]
`, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := mostAtOnce(res.Tasks); n > 2 || n < 1 {
		t.Errorf("%d ran at once, want at most 2", n)
	}
}

// fakeGPUs opens simulated GPUs of their own for a test: trials claim their memory by
// running the test binary as fake-alloc (see TestMain).
func fakeGPUs(t testing.TB, sizes ...uint64) gpu.Probe {
	t.Helper()
	devs := make([]gpusim.Device, len(sizes))
	for i, s := range sizes {
		devs[i] = gpusim.Device{Total: s}
	}
	p, err := gpusim.Open(gpusim.Options{Devices: devs, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeAlloc is a trial's command that holds size on its simulated GPU for hold.
func fakeAlloc(size, hold string) string {
	return fmt.Sprintf(`RUNALL_TEST_FAKE_ALLOC=1 "$RUNALL_TEST_BIN" -size %s -hold %s`, size, hold)
}

// 10 GiB trials on 32 GiB (1.6 of it margin) run three at once at most, however high
// max-parallel-commands is.
func TestRunGPUAdmission(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 8}
tasks:
  - name: sweep
    gpu-memory: 10GiB
    parallel-tasks:
      - name: t<replace>
        cmd: `+fakeAlloc("10GiB", "500ms")+`
        for-each: [1, 2, 3, 4, 5, 6]
`, Options{Resources: ResourceOptions{Probe: fakeGPUs(t, 32<<30)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := mostAtOnce(res.Tasks); n != 3 {
		t.Errorf("%d ran at once, want 3", n)
	}
	for _, r := range res.Tasks {
		if r.GPUMemory != 10<<30 || len(r.Devices) != 1 || r.PeakGPUMemory != 10<<30 || r.PeakGPUMemorySource != "process" {
			t.Errorf("%s: need %d on %v, peak %d from %q; want 10 GiB, its own processes' peak", r.Name, r.GPUMemory, r.Devices, r.PeakGPUMemory, r.PeakGPUMemorySource)
		}
	}
	if res.GPUProcessIDs != "here" {
		t.Errorf("gpu_process_ids %q, want here", res.GPUProcessIDs)
	}
}

// A trial that prints a GPU out-of-memory error saying it needed more than its need goes
// back to the queue with twice that, and succeeds the second time.
func TestRunOOMRequeue(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran-once")
	res, out, err := runFile(t, fmt.Sprintf(`
tasks:
  - name: sweep
    gpu-memory: 4GiB
    parallel-tasks:
      - name: trial
        cmd: if [ -e %[1]s ]; then exit 0; fi; touch %[1]s; echo "CUDA out of memory. Tried to allocate 2.00 GiB. Including non-PyTorch memory, this process has 8.00 GiB memory in use." >&2; exit 1
`, marker), Options{Resources: ResourceOptions{Probe: fakeGPUs(t, 64<<30)}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := res.Tasks[0]
	if r.Status != results.StatusOK || r.OOMRequeues != 1 || r.GPUMemory != 20<<30 {
		t.Errorf("trial %+v; want ok after 1 requeue with its need raised to twice the 10 GiB it said it needed", r)
	}
	if !strings.Contains(out, "requeued after running out of GPU memory") {
		t.Errorf("the output does not say it was requeued\n%s", out)
	}
}

// The first signal stops the running tasks (SIGTERM), skips what has not started, and
// ends the run as interrupted.
func TestRunSignal(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var once sync.Once
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	go func() {
		for range 500 {
			if _, err := os.Stat(started); err == nil {
				once.Do(func() { sigs <- syscall.SIGTERM })
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, out, err := runFile(t, fmt.Sprintf(`
tasks:
  - name: long
    cmd: touch %s; sleep 30
  - name: next
    cmd: 'true'
`, started), Options{Signals: sigs, Grace: time.Second})
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Signal != syscall.SIGTERM {
		t.Fatalf("err = %v, want interrupted by SIGTERM\n%s", err, out)
	}
	got := byName(res)
	if got["long"].Status != results.StatusStopped || got["next"].Status != results.StatusSkipped {
		t.Errorf("long %+v, next %+v", got["long"], got["next"])
	}
	if long := got["long"]; long.Signal != "SIGTERM" || long.Reason != "killed by SIGTERM: runall was stopped by SIGTERM" {
		t.Errorf("long: signal %q, reason %q; want SIGTERM, killed by SIGTERM: runall was stopped by SIGTERM", long.Signal, long.Reason)
	}
	if res.Status != results.StatusStopped {
		t.Errorf("run status %q, want stopped", res.Status)
	}
	if d := got["long"].Duration(); d > 10*time.Second {
		t.Errorf("long ran %v after SIGTERM", d)
	}
}

// Trials of a block inherit the variables exported by the steps before it, and a trial's
// own steps run in order with what the earlier ones exported.
func TestRunTrialSteps(t *testing.T) {
	res, out, err := runFile(t, `
tasks:
  - name: setup
    cmd: export DATA=/data
  - name: sweep
    parallel-tasks:
      - name: trial
        tasks:
          - name: train
            cmd: test "$DATA" = /data && export MODEL=m1
          - name: eval
            cmd: test "$MODEL" = m1
`, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if names := slices.Collect(func(yield func(string) bool) {
		for _, r := range res.Tasks {
			if r.Status != results.StatusOK && !yield(r.Name) {
				return
			}
		}
	}); len(names) > 0 {
		t.Errorf("not ok: %v\n%s", names, out)
	}
}
