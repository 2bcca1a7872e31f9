// End-to-end test of `runall gpus` showing each GPU's MPS state while a run with
// gpu-isolation: mps holds both simulated GPUs, and after it.

package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/runall/runall/internal/eventually"
)

// gpusMPS is what `runall gpus --json` says of MPS, per GPU and for the node.
type gpusMPS struct {
	GPUs []struct {
		UUID string `json:"uuid"`
		MPS  struct {
			Daemon     string `json:"daemon"`
			Pipe       string `json:"pipe"`
			ControlPID int    `json:"control_pid"`
			RunPID     int    `json:"run_pid"`
			Run        string `json:"run"`
			RunGone    bool   `json:"run_gone"`
			Answers    bool   `json:"answers"`
			Servers    []int  `json:"servers"`
			Clients    int    `json:"clients"`
		} `json:"mps"`
	} `json:"gpus"`
	Node struct {
		Mode string `json:"gpu_isolation"`
	} `json:"mps"`
}

func (e *e2e) gpusMPS(t *testing.T, fake string) gpusMPS {
	t.Helper()
	r := e.runGPU("gpus", "--fake-gpus", fake, "--json")
	r.wantCode(t, 0)
	var g gpusMPS
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("runall gpus --json: %v\n%v", err, r)
	}
	return g
}

func TestGPUsShowsEachGPUsMPSDaemon(t *testing.T) {
	e := newGPUE2E(t)
	ctx, cancel := context.WithTimeout(context.Background(), gpuCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, runallBin, "--fake-gpus", "2x16GiB", "--output", "plain", testdata("mps/hold-two.yml"))
	cmd.Dir, cmd.Env = e.dir, e.env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a failed check leaves no run, nor its daemons, behind
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	})
	eventually.True(t, "both trials to start", func() bool {
		return strings.Contains(out.String(), "[left] started") && strings.Contains(out.String(), "[right] started")
	})
	var during gpusMPS
	eventually.True(t, "runall gpus to show a daemon with a client on each GPU", func() bool {
		during = e.gpusMPS(t, "2x16GiB")
		for _, g := range during.GPUs {
			if !g.MPS.Answers || g.MPS.Clients != 1 {
				return false
			}
		}
		return len(during.GPUs) == 2
	})
	table := e.runGPU("gpus", "--fake-gpus", "2x16GiB")
	for i, g := range during.GPUs {
		want := fmt.Sprintf("run pid %d: server %d, 1 client(s)", cmd.Process.Pid, g.MPS.Servers[0])
		if len(g.MPS.Servers) == 1 && !strings.Contains(table.stdout, want) {
			t.Errorf("GPU%d: the table's MPS column does not say %q\n%v", i, want, table)
		}
	}
	pipes := map[string]bool{}
	for i, g := range during.GPUs {
		m := g.MPS
		if m.Daemon != "run" || m.RunPID != cmd.Process.Pid || !strings.HasSuffix(m.Run, "mps/hold-two.yml") ||
			len(m.Servers) != 1 || !processAlive(m.ControlPID) || !processAlive(m.Servers[0]) {
			t.Errorf("GPU%d: %+v, want this run's daemon (pid %d), alive, with one live server", i, m, cmd.Process.Pid)
		}
		pipes[m.Pipe] = true
	}
	if len(pipes) != 2 || !strings.Contains(out.String(), "under "+filepath.Dir(filepath.Dir(during.GPUs[0].MPS.Pipe))) {
		t.Errorf("want a daemon of its own per GPU, under the directory the run named: pipes %v\n%s", pipes, out)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run: %v\n%s", err, out)
	}
	if after := e.runGPU("gpus", "--fake-gpus", "2x16GiB"); len(regexp.MustCompile(`(?m)^\d+ .*%\s+none$`).FindAllString(after.stdout, -1)) != 2 {
		t.Errorf("after the run the table's MPS column does not say none for each GPU\n%v", after)
	}
	for i, g := range e.gpusMPS(t, "2x16GiB").GPUs {
		if g.MPS.Daemon != "none" || g.MPS.Answers {
			t.Errorf("GPU%d after the run: %+v, want none", i, g.MPS)
		}
		wantMPSGone(t, during.GPUs[i].MPS.ControlPID, filepath.Dir(filepath.Dir(during.GPUs[i].MPS.Pipe)))
		if processAlive(during.GPUs[i].MPS.Servers[0]) {
			t.Errorf("GPU%d: the MPS server (pid %d) still runs after the run", i, during.GPUs[i].MPS.Servers[0])
		}
	}
}
