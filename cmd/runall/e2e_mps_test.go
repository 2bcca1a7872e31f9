// End-to-end tests of gpu-isolation: mps on simulated GPUs, against the simulated MPS
// control daemon and server (gpu/gpusim/mpsd.go) that runall puts on its trials' PATH.

package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
)

// mpsStarted is what runall says as it starts its daemons: their PIDs and their directory.
var mpsStarted = regexp.MustCompile(`started an MPS control daemon per GPU \(GPU0 pid (\d+)\) under (\S+)`)

// daemonOf reads the daemon's PID and directory from runall's output.
func daemonOf(t *testing.T, out string) (int, string) {
	t.Helper()
	m := mpsStarted.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("runall did not say it started an MPS daemon:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid, m[2]
}

// wantMPSGone fails unless pid names no live process and dir does not exist.
func wantMPSGone(t *testing.T, pid int, dir string) {
	t.Helper()
	if processAlive(pid) {
		t.Errorf("the MPS control daemon (pid %d) still runs after runall's end", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the MPS directory %s is still there after runall's end (err %v)", dir, err)
	}
}

func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestMPSCapsEachTrialAndRaisesTheCapOfOneThatRanOut(t *testing.T) {
	e := newGPUE2E(t)
	r := e.runGPU("--fake-gpus", "16GiB", "--output", "plain", "--results", "res.json", testdata("mps/caps.yml"))
	r.wantCode(t, 0)
	pid, dir := daemonOf(t, r.stdout)
	// 1 GiB and the margin (5% of 16 GiB, 819.2 MiB), rounded up to whole MiB.
	if !strings.Contains(r.stdout, "[small] LIMIT=0=1844MB THREADS=50 PIPE="+dir+"/0/pipe") {
		t.Errorf("small was not made a client of GPU0's daemon, capped at 1844MB with half the threads\n%v", r)
	}
	if !strings.Contains(r.stdout, "torch.OutOfMemoryError: CUDA out of memory") || !strings.Contains(r.stdout, "past the MPS pinned memory limit") {
		t.Errorf("greedy was not refused past its cap with CUDA's error\n%v", r)
	}
	limits := regexp.MustCompile(`\[greedy\] LIMIT=0=(\d+)MB`).FindAllStringSubmatch(r.stdout, -1)
	if len(limits) != 2 {
		t.Fatalf("greedy ran %d times with a cap, want 2 (capped, then requeued with a raised cap)\n%v", len(limits), r)
	}
	first, _ := strconv.Atoi(limits[0][1])
	second, _ := strconv.Atoi(limits[1][1])
	if first != 1844 || second <= 3*1024 {
		t.Errorf("greedy's caps: %dMB then %dMB, want 1844MB then more than the 3 GiB it holds\n%v", first, second, r)
	}
	res := readResults(t, e.path("res.json"))
	if got := res.task(t, "small").Attempts; got != 1 {
		t.Errorf("small ran %d times, want once: greedy's overrun is greedy's alone", got)
	}
	wantMPSGone(t, pid, dir)
}

func TestMPSFaultRequeuesBystandersAndFailsTheTrialThatCausedIt(t *testing.T) {
	e := newGPUE2E(t)
	r := e.runGPU("--fake-gpus", "16GiB", "--output", "plain", "--results", "res.json", testdata("mps/fault.yml"))
	r.wantCode(t, 1)
	pid, dir := daemonOf(t, r.stdout)
	res := readResults(t, e.path("res.json"))
	faulty := res.task(t, "faulty")
	if faulty.Status != "failed" || !strings.Contains(faulty.Reason, "caused a fatal fault on GPU0's MPS server") {
		t.Errorf("faulty: %s %q, want failed, named as the fault's cause", faulty.Status, faulty.Reason)
	}
	for _, name := range []string{"calm-1", "calm-2"} {
		if got := res.task(t, name); got.Status != "ok" || got.Attempts != 2 {
			t.Errorf("%s: %s after %d attempts, want ok after 2 (a bystander requeued once)", name, got.Status, got.Attempts)
		}
	}
	for _, want := range []string{"a bystander, requeued, not counted as a failure", "GPU0: MPS server down", "GPU0: MPS server restarted"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output does not say %q\n%v", want, r)
		}
	}
	wantMPSGone(t, pid, dir)
}

func TestMPSDeadServerRequeuesItsClients(t *testing.T) {
	e := newGPUE2E(t)
	r := e.runGPU("--fake-gpus", "16GiB", "--output", "plain", "--results", "res.json", testdata("mps/dead.yml"))
	r.wantCode(t, 0)
	res := readResults(t, e.path("res.json"))
	if got := res.task(t, "calm"); got.Status != "ok" || got.Attempts != 2 {
		t.Errorf("calm: %s after %d attempts, want ok after 2 (requeued when its server died)\n%v", got.Status, got.Attempts, r)
	}
	if !strings.Contains(r.stdout, "its MPS server died") {
		t.Errorf("the output does not say the server died\n%v", r)
	}
}

func TestMPSReusesTheNodesDaemon(t *testing.T) {
	e := newGPUE2E(t)
	bin := t.TempDir()
	if err := os.Symlink(runallBin, filepath.Join(bin, "nvidia-cuda-mps-control")); err != nil {
		t.Fatal(err)
	}
	node := t.TempDir()
	pipe, logs := filepath.Join(node, "pipe"), filepath.Join(node, "log")
	env := append(e.env, "CUDA_MPS_PIPE_DIRECTORY="+pipe, "CUDA_MPS_LOG_DIRECTORY="+logs)
	start := exec.Command(filepath.Join(bin, "nvidia-cuda-mps-control"), "-d")
	start.Env = env
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("start the node's daemon: %v\n%s", err, out)
	}
	pidText, err := os.ReadFile(filepath.Join(pipe, "nvidia-cuda-mps-control.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	e.env = env
	r := e.runGPU("--fake-gpus", "16GiB", "--output", "plain", testdata("mps/caps.yml"))
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "a client of the node's MPS control daemon at CUDA_MPS_PIPE_DIRECTORY="+pipe) ||
		!strings.Contains(r.stdout, "PIPE="+pipe+" ") && !strings.Contains(r.stdout, "PIPE="+pipe+"\n") {
		t.Errorf("runall did not say it is a client of the node's daemon, or did not give its trials its pipe\n%v", r)
	}
	if mpsStarted.MatchString(r.stdout) {
		t.Errorf("runall started daemons of its own beside the node's\n%v", r)
	}
	if !processAlive(pid) {
		t.Errorf("runall stopped the node's daemon, which is not its own")
	}
	g := e.runGPU("gpus", "--fake-gpus", "16GiB")
	g.wantCode(t, 0)
	if !strings.Contains(g.stdout, "MPS: a node's control daemon answers at CUDA_MPS_PIPE_DIRECTORY="+pipe) {
		t.Errorf("runall gpus does not show the node's MPS daemon\n%v", g)
	}
	if !regexp.MustCompile(`(?m)^0 .*%\s+node: (server \d+, 0 client\(s\)|no server yet)$`).MatchString(g.stdout) {
		t.Errorf("runall gpus does not show the node's daemon serving GPU 0, its trials gone\n%v", g)
	}
	if b, _ := os.ReadFile(filepath.Join(logs, "server.log")); !strings.Contains(string(b), "New client") {
		t.Errorf("no trial was a client of the node's server: server.log is %q", b)
	}
}

func TestMPSDaemonStoppedAtSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newGPUE2E(t)
			ctx, cancel := context.WithTimeout(context.Background(), gpuCmdTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, runallBin, "--fake-gpus", "16GiB", "--output", "plain", "--grace", "2s", testdata("mps/long.yml"))
			cmd.Dir, cmd.Env = e.dir, e.env
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			eventually.True(t, "the long trial to start", func() bool { return strings.Contains(out.String(), "[long] started") })
			pid, dir := daemonOf(t, out.String())
			if !processAlive(pid) {
				t.Fatalf("the daemon (pid %d) does not run while its trial does", pid)
			}
			_ = cmd.Process.Signal(sig)
			_ = cmd.Wait()
			time.Sleep(100 * time.Millisecond)
			wantMPSGone(t, pid, dir)
		})
	}
}

// TestMPSKernelsOverlap: two trials that keep one simulated GPU busy with kernels that fill
// half its SMs take turns without MPS (each slower than alone) and overlap under
// gpu-isolation: mps. A ratio of the two runs' slowest trials, with a generous bound.
func TestMPSKernelsOverlap(t *testing.T) {
	slowest := func(iso string) float64 {
		e := newGPUE2E(t)
		r := e.runGPU("--fake-gpus", "32GiB", "--output", "plain", "--results", "res.json", testdata("mps/overlap-"+iso+".yml"))
		r.wantCode(t, 0)
		var most float64
		for _, tr := range readResults(t, e.path("res.json")).Tasks {
			start, err1 := time.Parse(time.RFC3339Nano, tr.StartedAt)
			end, err2 := time.Parse(time.RFC3339Nano, tr.FinishedAt)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: times %q %q", tr.Name, tr.StartedAt, tr.FinishedAt)
			}
			most = max(most, end.Sub(start).Seconds())
		}
		return most
	}
	without, with := slowest("none"), slowest("mps")
	if with > 0.7*without {
		t.Errorf("under MPS the slowest trial took %.2fs, without %.2fs: want their kernels to overlap (well under 0.7 times)", with, without)
	}
}

// A trial of two GPUs cannot be the client of runall's per-GPU servers: gpu-isolation: mps
// refuses the run before anything starts, and says what to do.
func TestMPSRefusesATrialOfTwoGPUs(t *testing.T) {
	e := newGPUE2E(t)
	r := e.runGPU("--fake-gpus", "2x16GiB", "--output", "plain", testdata("mps/two-gpus.yml"))
	r.wantCode(t, 1)
	for _, want := range []string{`task "wide" asks for 2 GPUs`, "gpu-isolation: auto"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error does not say %q\n%v", want, r)
		}
	}
	if strings.Contains(r.stdout, "[wide] started") {
		t.Errorf("the trial ran\n%v", r)
	}
}

func TestGPUsShowsMPS(t *testing.T) {
	e := newGPUE2E(t)
	r := e.runGPU("gpus", "--fake-gpus", "16GiB")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "MPS: simulated (nvidia-cuda-mps-control is runall itself on --fake-gpus): gpu-isolation: mps starts one control daemon per GPU") {
		t.Errorf("runall gpus does not say what MPS it has\n%v", r)
	}
}

// check prints gpu-isolation and gpu-threads, and check --simulate overlaps the kernels of
// trials on one GPU under it, says so, and says that a trial of two GPUs cannot run under
// runall's per-GPU servers.
func TestCheckSaysMPS(t *testing.T) {
	e := newGPUE2E(t)
	r := e.runGPU("check", testdata("mps/caps.yml"))
	r.wantCode(t, 0)
	for _, want := range []string{"gpu isolation mps", "gpu 1.0 GiB x1 threads 50%"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check does not print %q\n%v", want, r)
		}
	}
	// With compute modelled, two busy trials on one GPU take turns without MPS (2.5x each
	// alongside) and overlap under it (2x, no switching).
	for iso, want := range map[string]string{"none": "Predicted makespan: 25.0s", "mps": "Predicted makespan: 20.0s"} {
		r := e.runGPU("check", "--simulate", "--fake-gpus", "32GiB", "--duration", "10s", "--busy", "1", testdata("mps/overlap-"+iso+".yml"))
		r.wantCode(t, 0)
		if !strings.Contains(r.stdout, want) {
			t.Errorf("gpu-isolation: %s: check --simulate --busy 1 does not say %q\n%v", iso, want, r)
		}
	}
	r = e.runGPU("check", "--simulate", "--fake-gpus", "2x16GiB", "--duration", "10s", testdata("mps/two-gpus.yml"))
	r.wantCode(t, 0)
	for _, want := range []string{"gpu-isolation: mps: each trial runs as a client of its GPU's MPS server", `task "wide" asks for 2 GPUs`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check --simulate does not say %q\n%v", want, r)
		}
	}
}

// With stop-on-failure (the default) the faulting trial's failure stops the run: its
// bystanders are stopped with it (or, when they ended first and were requeued, skipped as the
// run halts): none is counted as a failure.
func TestMPSFaultThatStopsTheRunStopsItsBystanders(t *testing.T) {
	e := newGPUE2E(t)
	r := e.runGPU("--fake-gpus", "16GiB", "--output", "plain", "--results", "res.json", testdata("mps/fault-stop.yml"))
	r.wantCode(t, 1)
	res := readResults(t, e.path("res.json"))
	if got := res.task(t, "faulty"); got.Status != "failed" {
		t.Errorf("faulty: %s, want failed", got.Status)
	}
	for _, name := range []string{"calm-1", "calm-2"} {
		got := res.task(t, name)
		stopped := got.Status == "stopped" && strings.Contains(got.Reason, "a bystander")
		if !stopped && got.Status != "skipped" {
			t.Errorf("%s: %s %q, want stopped as a bystander, or skipped\n%v", name, got.Status, got.Reason, r)
		}
	}
}

// bench/mps-check.sh --smoke runs the MPS check's two parts on the simulated GPU and MPS: the
// script itself works, before a real GPU runs it.
func TestMPSCheckSmoke(t *testing.T) {
	e := newGPUE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), gpuCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "..", "bench", "mps-check.sh"), "--smoke", "--trials", "2", "--steps", "20")
	cmd.Env = append(e.env, "RUNALL="+runallBin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench/mps-check.sh --smoke: %v\n%s", err, out)
	}
	for _, want := range []string{"a trial past its MPS cap: ok: greedy failed (CUDA out of memory), calm ok after 1 attempt(s)", "| medium | "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("bench/mps-check.sh --smoke does not print %q\n%s", want, out)
		}
	}
}
