package executor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// told is what the hooks were told.
type told struct {
	mu      sync.Mutex
	started []int
	lines   []string
	ended   []bool // each attempt's retry
}

func (t *told) hooks(again bool) Hooks {
	return Hooks{
		Started: func(n int) { t.mu.Lock(); t.started = append(t.started, n); t.mu.Unlock() },
		Line:    func(_ int, _, line string) { t.mu.Lock(); t.lines = append(t.lines, line); t.mu.Unlock() },
		Ended: func(_ int, _ proc.Outcome, retry bool) bool {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.ended = append(t.ended, retry)
			return again
		},
	}
}

func command(cmd string, retries int) Command {
	return Command{Attempt: proc.Attempt{Cmd: cmd, Procs: proc.NewTable(), KillWait: time.Second}, Retries: retries}
}

func TestRetriesUntilSpent(t *testing.T) {
	var got told
	res := Run(context.Background(), command("echo try; exit 3", 2), NewHandle(proc.NewTable()), got.hooks(true))
	if res.Attempts != 3 || res.Outcome.ExitCode != 3 || res.Stop != nil {
		t.Errorf("%d attempts, exit %d, stop %v; want 3, 3, none", res.Attempts, res.Outcome.ExitCode, res.Stop)
	}
	if len(got.lines) != 3 || len(got.started) != 3 || got.ended[0] != true || got.ended[2] != false {
		t.Errorf("told %d lines, %d starts, ends %v", len(got.lines), len(got.started), got.ended)
	}
}

// Ended may end the command early: the run halted, or the trial goes back to the line.
func TestEndedEndsIt(t *testing.T) {
	var got told
	res := Run(context.Background(), command("exit 1", 5), NewHandle(proc.NewTable()), got.hooks(false))
	if res.Attempts != 1 {
		t.Errorf("%d attempts, want 1", res.Attempts)
	}
}

// A stop asked while a command runs ends it (SIGKILL after the grace when it ignores
// SIGTERM) with the status asked, and no retry follows.
func TestStop(t *testing.T) {
	var got told
	procs := proc.NewTable()
	h := NewHandle(procs)
	c := command("trap '' TERM; echo up; sleep 30", 3)
	c.Attempt.Procs = procs
	hooks := got.hooks(true)
	hooks.Line = func(int, string, string) {
		h.Stop(Stop{Status: "pruned", Reason: "loss too high"}, 100*time.Millisecond)
	}
	res := Run(context.Background(), c, h, hooks)
	if res.Stop == nil || res.Stop.Status != results.Status("pruned") || res.Attempts != 1 {
		t.Fatalf("stop %v after %d attempts, want pruned after 1", res.Stop, res.Attempts)
	}
	if got.ended[0] {
		t.Errorf("Ended was told a stopped command would be retried")
	}
	if h.Stop(Stop{Status: "failed"}, 0) {
		t.Errorf("a second stop was taken")
	}
}

// A command that starts after its trial was stopped is stopped as it starts.
func TestStopBeforeStart(t *testing.T) {
	var got told
	procs := proc.NewTable()
	h := NewHandle(procs)
	h.Stop(Stop{Status: "pruned"}, 100*time.Millisecond)
	c := command("sleep 30", 0)
	c.Attempt.Procs = procs
	res := Run(context.Background(), c, h, got.hooks(true))
	if res.Stop == nil || res.Outcome.OK() {
		t.Errorf("outcome %+v, stop %v; want stopped", res.Outcome, res.Stop)
	}
}

func TestRunningStopsByTask(t *testing.T) {
	r := NewRunning(time.Second)
	if r.Stop(nil, "pruned", "") {
		t.Errorf("stopped a task that does not run")
	}
}
