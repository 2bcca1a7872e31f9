// End-to-end tests of MPS daemons left by a killed runall (issue 42, point 5): `runall gpus`
// says their run is gone, and the next run on the node stops one without clients, or
// leaves one with clients to them, its GPU's trials waiting until they end.

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runall/runall/internal/eventually"
)

// killedMPSRun starts a run of mps/leftover.yml, SIGKILLs runall once its trial started,
// and returns its daemon's PID and directory and its trial's (the MPS client's) PID. TMPDIR
// is the test's own (short: the daemon's socket path must fit), so only this run's daemons
// are found there.
func killedMPSRun(t *testing.T, e *e2e) (daemon int, dir string, client int) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "rmps")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	e.env = append(e.env, "TMPDIR="+tmp)
	p := e.start("--fake-gpus", "16GiB", "--output", "plain", testdata("mps/leftover.yml"))
	p.waitOutput("[held] started")
	eventually.True(t, "the trial to write its PID", func() bool { return e.exists("client.pid") })
	daemon, dir = daemonOf(t, p.stdout.String())
	client = pidsIn(t, e.path("client.pid"))[0]
	killOnCleanup(t, []int{daemon, client})
	p.signal(syscall.SIGKILL)
	_ = p.cmd.Wait() // killed: what p.wait would call a failure
	return daemon, dir, client
}

// gpusSaysGone waits until `runall gpus` says GPU 0's daemon is a gone run's with clients
// clients, in its JSON and its table.
func gpusSaysGone(t *testing.T, e *e2e, clients int) {
	t.Helper()
	var g gpusMPS
	ok := eventually.Until(eventually.Limit, func() bool {
		g = e.gpusMPS(t, "16GiB")
		m := g.GPUs[0].MPS
		return m.Daemon == "run" && m.RunGone && m.Answers && m.Clients == clients
	})
	if !ok {
		t.Fatalf("runall gpus --json: GPU 0's MPS %+v, want a gone run's daemon with %d client(s)", g.GPUs[0].MPS, clients)
	}
	r := e.runGPU("gpus", "--fake-gpus", "16GiB")
	if !strings.Contains(r.stdout, "left by run pid ") || !strings.Contains(r.stdout, " (gone): ") {
		t.Errorf("runall gpus does not say the daemon's run is gone\n%v", r)
	}
}

// TestMPSDaemonLeftWithoutClientsIsStopped: runall SIGKILLed mid-run leaves its daemon; once
// its trial is gone too, `runall gpus` says the daemon's run is gone, and the next run stops
// it (quit) and removes its directory before it runs its own trials.
func TestMPSDaemonLeftWithoutClientsIsStopped(t *testing.T) {
	e := newGPUE2E(t)
	daemon, dir, client := killedMPSRun(t, e)
	if err := syscall.Kill(client, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gpusSaysGone(t, e, 0)
	r := e.runGPU("--fake-gpus", "16GiB", "--output", "plain", testdata("mps/after.yml"))
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "which is gone, had no clients: stopped") {
		t.Errorf("the next run did not say it stopped the daemon left behind\n%v", r)
	}
	eventually.Until(eventually.Limit, func() bool { return !processAlive(daemon) })
	wantMPSGone(t, daemon, filepath.Join(dir, "0"))
}

// TestMPSDaemonLeftWithClientsWaits: a daemon left by a SIGKILLed runall whose trial still
// runs is left to it: the next run says so, its MPS trial waits (it starts only once the
// client ended), and then the daemon is stopped.
func TestMPSDaemonLeftWithClientsWaits(t *testing.T) {
	e := newGPUE2E(t)
	daemon, dir, client := killedMPSRun(t, e)
	gpusSaysGone(t, e, 1)
	p := e.start("--fake-gpus", "16GiB", "--output", "plain", testdata("mps/after.yml"))
	p.waitOutput("which is gone, still serves 1 client(s): left to them; its GPU's MPS trials wait until they end")
	if out := p.stdout.String(); strings.Contains(out, "[after] started") {
		t.Fatalf("the trial started beside the clients of a daemon left behind\n%s", out)
	}
	if !processAlive(daemon) {
		t.Fatal("the daemon left behind was stopped while it had a client")
	}
	if err := syscall.Kill(client, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "has no clients left: stopped; its GPU takes trials") || !strings.Contains(r.stdout, "[after] started") {
		t.Errorf("the daemon left behind was not stopped once its client ended, or the trial did not run\n%v", r)
	}
	eventually.Until(eventually.Limit, func() bool { return !processAlive(daemon) })
	wantMPSGone(t, daemon, filepath.Join(dir, "0"))
}
