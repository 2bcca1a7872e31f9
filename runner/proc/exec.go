// Package proc runs task commands: each in its own process group, output streamed line by
// line, stopped with a grace period, and nothing left behind when runall ends. It knows
// nothing of task files, GPUs or outputs.
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/runall/runall/internal/owned"
)

// Shell is bash where there is one, else sh: bashful's commands are bash.
func Shell() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

// envCaptureSuffix runs after a sequential task's command so that what it exported reaches
// the tasks after it (bashful does the same). It is on its own line so that a trailing
// comment in cmd cannot swallow it, and it keeps the command's exit status.
const envCaptureSuffix = "\n__runall_rc=$?; env -0 >\"$RUNALL_ENV_OUT\" 2>/dev/null; exit $__runall_rc\n"

// Attempt is one run of one command.
type Attempt struct {
	Cmd      string   // the command line after url/<exec> and sudo handling
	Dir      string   // working directory
	Env      []string // complete environment
	Capture  bool     // capture exported environment (sequential tasks)
	Timeout  time.Duration
	OnLine   func(stream, line string) // called from reader goroutines, serially per Attempt
	Procs    *Table
	KillWait time.Duration  // between SIGTERM and SIGKILL on timeout
	OnStart  func(pgid int) // called once the shell runs, with its process group id; may be nil
	Mask     Masker         // hides secrets across the split of a line too long to hold; may be nil
}

// Masker hides secrets in output. A line longer than maxLine is passed on in pieces; each
// piece is masked with the start of the next, so that a secret across the split is hidden
// whole rather than printed in two halves.
type Masker interface {
	Replace(s string) string
	Longest() int // the length in bytes of the longest secret
}

// Outcome is how an Attempt ended.
type Outcome struct {
	ExitCode int            // -1 when killed by a signal or never started
	Signal   syscall.Signal // the signal that killed the shell; 0 when it exited
	Err      error          // the process could not be started
	TimedOut bool           // killed by timeout:
	Exported []string       // NAME=value pairs of the environment at its end (capture only)
	Started  time.Time
	Finished time.Time
}

// OK reports whether the command ran and exited 0 in time.
func (o Outcome) OK() bool { return o.Err == nil && !o.TimedOut && o.ExitCode == 0 }

// Run starts the process, streams its output and waits for it. ctx cancellation does not
// kill it: stopping is the Table's job, so that every running task gets the same grace.
func (a *Attempt) Run(ctx context.Context) Outcome {
	var out Outcome
	c, envFile, envDir := a.command()
	if envDir != nil {
		defer envDir.Close()
	}
	// Our own pipes rather than exec's copying goroutines: Wait then returns when the shell
	// exits even if a background grandchild keeps the pipe open.
	p, err := newPipes(c)
	if err != nil {
		out.Err, out.ExitCode = err, -1
		return out
	}
	out.Started = time.Now()
	if err := a.start(c); err != nil {
		p.closeRead()
		out.Err, out.ExitCode, out.Finished = fmt.Errorf("start %s: %w", Shell(), err), -1, time.Now()
		return out
	}
	pgid := c.Process.Pid
	defer a.Procs.remove(pgid)
	if a.OnStart != nil {
		a.OnStart(pgid)
	}
	readers := p.read(a.Mask, a.OnLine)
	waitErr, timedOut := a.wait(c, pgid)
	out.Finished = time.Now()
	p.drain(readers, drainQuiet, drainMost)

	out.TimedOut = timedOut
	out.ExitCode, out.Signal = exitStatus(waitErr, c.ProcessState)
	if envFile != "" && out.ExitCode == 0 {
		out.Exported = readEnvFile(envFile)
	}
	return out
}

// command is the shell running a.Cmd; with Capture, also the file it leaves its
// environment in ("" when it could not be made: then nothing is captured), in a private
// directory of its own that the caller closes, which removes it.
func (a *Attempt) command() (c *exec.Cmd, envFile string, envDir *owned.Dir) {
	script := oomScorePrefix(a.Procs.oomScoreAdj) + a.Cmd
	if a.Capture {
		if d, err := owned.Temp("runall-env-"); err == nil {
			envDir, envFile = d, d.Join("env")
			script += envCaptureSuffix
		}
	}
	c = exec.Command(Shell(), "-c", script)
	c.Dir = a.Dir
	c.Env = a.Env
	if envFile != "" {
		c.Env = append(c.Env[:len(c.Env):len(c.Env)], "RUNALL_ENV_OUT="+envFile)
	}
	// Its own process group, so that signals reach everything it starts; and killed with
	// runall should runall itself be killed outright.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return c, envFile, envDir
}

// start starts c and registers its process group under the table's lock, so that the
// zombie reaper never takes this child from exec's Wait, however quickly it exits.
func (a *Attempt) start(c *exec.Cmd) error {
	a.Procs.mu.Lock()
	err := c.Start()
	if err == nil {
		a.Procs.addLocked(c.Process.Pid)
	}
	a.Procs.mu.Unlock()
	c.Stdout.(*os.File).Close() // the child has its copies
	c.Stderr.(*os.File).Close()
	return err
}

// wait waits for the shell, stopping its group when the timeout passes first.
func (a *Attempt) wait(c *exec.Cmd, pgid int) (err error, timedOut bool) {
	if a.Timeout <= 0 {
		return c.Wait(), false
	}
	fired := make(chan struct{})
	timer := time.AfterFunc(a.Timeout, func() {
		close(fired)
		terminateGroup(pgid, a.KillWait)
	})
	err = c.Wait()
	timer.Stop()
	select {
	case <-fired:
		return err, true
	default:
		return err, false
	}
}

// exitStatus is the shell's exit code, or -1 and the signal that killed it.
func exitStatus(err error, ps *os.ProcessState) (int, syscall.Signal) {
	if ps == nil {
		return -1, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	if err != nil && !errors.As(err, new(*exec.ExitError)) {
		return -1, 0
	}
	return ps.ExitCode(), 0
}
