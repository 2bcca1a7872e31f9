package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// commandResult is what runCommand tells its caller.
type commandResult struct {
	ok       bool     // succeeded, or failed with ignore-failure
	oom      bool     // ran out of GPU memory and goes again, after its trial is released
	need     uint64   // the need it goes again with
	exported []string // variables it exported (sequential tasks)
}

// runCommand runs one command task with its retries and records its result. p is its GPU
// placement (a trial's, for its steps too), nil without one.
func (r *run) runCommand(ctx context.Context, t *plan.Task, env []string, capture bool, p *admit.Placement) commandResult {
	log, err := r.logs.open(t, func(msg string) { r.emit(event.Event{Kind: event.RunStatus, Line: msg}) })
	if err != nil {
		r.failUnrunnable(t, "cannot open its log file: "+err.Error()) // a failure like any other: exit 1, stop-on-failure
		return commandResult{}
	}
	defer log.close()
	cmdline, dir, err := r.prepare(ctx, t)
	if err != nil {
		r.failUnrunnable(t, err.Error()) // a failed download, md5 or cwd fails the run too
		return commandResult{}
	}
	c := &command{r: r, t: t, p: p, log: log}
	env = r.taskEnv(t, env, p)
	a := &proc.Attempt{Cmd: cmdline, Dir: dir, Env: env, Capture: capture, Timeout: t.Timeout,
		Procs: r.procs, KillWait: r.opts.Grace}
	a.OnStart = r.onStart(ctx, p)
	out, requeued := c.attempts(ctx, a)
	if requeued.oom {
		return requeued
	}
	r.ledger.update(t, func(res *results.Task) {
		res.StdoutTail, res.StderrTail = c.tails.lines("stdout"), c.tails.lines("stderr")
		if p != nil {
			peak, source := r.admit.Peak(p)
			res.PeakGPUMemory, res.PeakGPUMemorySource = max(res.PeakGPUMemory, peak), string(source)
			res.GPUMemory = r.admit.Need(p) // a learned or raised need, settled to its peak
		}
	})
	r.recordMetrics(c, dir, env, out.OK())
	cr := c.conclude(out, env)
	r.checkStopWhen(t, out.OK())
	r.uploadAfter(ctx, t, out.OK())
	return cr
}

// command is one command task while it runs: its logs, the tails of its output for the
// failure report, and whether it ran out of GPU memory.
type command struct {
	r       *run
	t       *plan.Task
	p       *admit.Placement
	log     *taskLog
	tails   tailBuffer
	oom     bool       // the current attempt printed a GPU out-of-memory error
	said    admit.OOM  // what its error messages said
	fatal   error      // why it cannot run here at all, found when it ran out of memory
	metrics metric.Set // what it reported with runall-metric lines, then its metrics file
}

// attempts runs a until it succeeds, its retries are spent or the run halts. An attempt
// that runs out of GPU memory may instead send the trial back to the queue: then the second
// result says so, and the task is not finished.
func (c *command) attempts(ctx context.Context, a *proc.Attempt) (proc.Outcome, commandResult) {
	r, t := c.r, c.t
	attempts := 1 + t.Retries
	var out proc.Outcome
	for n := 1; n <= attempts; n++ {
		if n > 1 && r.isHalted() {
			break
		}
		attempt := c.begin(a.Cmd)
		c.oom, c.said = false, admit.OOM{}
		a.OnLine = func(stream, line string) { c.onLine(attempt, stream, line) }
		out = a.Run(ctx)
		r.met.taskEnded()
		if out.OK() {
			break
		}
		reason := c.failureReason(out)
		c.log.mark("attempt %d: %s", attempt, reason)
		if c.oom && c.p != nil && !r.isHalted() {
			need, requeues, err := r.admit.Requeue(c.p, c.said)
			if err == nil {
				c.requeued(attempt, out, requeues)
				return out, commandResult{oom: true, need: need}
			}
			if errors.Is(err, admit.ErrNeverFits) {
				c.fatal = err // no retry can help
				break
			}
		}
		if n < attempts && !r.isHalted() {
			r.emit(event.Event{Kind: event.TaskEnded, Task: t, Attempt: attempt, Status: results.StatusFailed,
				ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started),
				Reason: fmt.Sprintf("%s; retrying (%d of %d retries left)", reason, attempts-n, t.Retries)})
		}
	}
	return out, commandResult{}
}

// begin records the start of an attempt and announces it; it returns the attempt's number.
func (c *command) begin(cmdline string) int {
	var attempt int
	c.r.ledger.update(c.t, func(res *results.Task) {
		res.Attempts++
		attempt = res.Attempts
		if res.StartedAt.IsZero() {
			res.StartedAt = time.Now()
		}
		res.Status = results.StatusRunning
		if c.p != nil {
			res.Devices, res.GPUMemory = c.p.UUIDs, c.p.Need
		}
	})
	c.log.mark("%s attempt %d: %s", time.Now().Format(time.RFC3339), attempt, c.r.mask.Replace(cmdline))
	var devices []string
	if c.p != nil {
		devices = c.p.UUIDs
	}
	c.r.emit(event.Event{Kind: event.TaskStarted, Task: c.t, Attempt: attempt, Devices: devices})
	c.r.met.taskStarted()
	return attempt
}

// onLine takes one line of the command's output; proc calls it serially per attempt.
func (c *command) onLine(attempt int, stream, line string) {
	line = c.r.mask.Replace(line)
	c.tails.add(stream, line)
	if stream == "stdout" {
		c.metrics.Line(line)
	}
	if c.p != nil {
		c.oom = c.oom || admit.IsOOM(line)
		c.said = c.said.Add(admit.ParseOOM(line))
	}
	c.log.line(line)
	c.r.emit(event.Event{Kind: event.TaskOutput, Task: c.t, Attempt: attempt, Stream: stream, Line: line})
}

// requeued records that an attempt ran out of GPU memory and its trial goes again.
func (c *command) requeued(attempt int, out proc.Outcome, requeues int) {
	c.r.ledger.update(c.t, func(res *results.Task) {
		res.OOMRequeues = requeues
		res.Status = results.StatusPending
	})
	c.r.met.oomRequeued()
	c.r.emit(event.Event{Kind: event.TaskEnded, Task: c.t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Reason: "out of GPU memory; requeued"})
}

// conclude finishes the task by how its last attempt ended. One that ended, however, after
// runall was told to stop is stopped, not failed: the stop ended it.
func (c *command) conclude(out proc.Outcome, env []string) commandResult {
	t := c.t
	if out.Signal != 0 {
		c.r.ledger.update(t, func(res *results.Task) { res.Signal = proc.SignalName(out.Signal) })
	}
	switch stop := c.r.ledger.stoppedBy(); {
	case out.OK():
		c.r.finish(t, results.StatusOK, 0, "")
		return commandResult{ok: true, exported: proc.ExportedChanges(env, out.Exported)}
	case stop != 0:
		c.r.finish(t, results.StatusStopped, out.ExitCode,
			fmt.Sprintf("%s: runall was stopped by %s", c.failureReason(out), proc.SignalName(stop)))
		return commandResult{}
	case t.IgnoreFailure:
		c.r.finish(t, results.StatusIgnored, out.ExitCode, c.failureReason(out)+" (ignored)")
		return commandResult{ok: true}
	}
	reason := c.failureReason(out)
	if c.fatal != nil {
		reason += ": " + c.fatal.Error()
	}
	c.r.finish(t, results.StatusFailed, out.ExitCode, reason)
	c.r.ledger.fail(t.StopOnFailure)
	return commandResult{}
}

// failureReason says how an attempt failed. A SIGKILL that runall did not send (no
// timeout, no stop) came from outside, most often from the kernel's OOM killer.
func (c *command) failureReason(out proc.Outcome) string {
	switch {
	case out.Err != nil:
		return out.Err.Error()
	case out.TimedOut:
		return fmt.Sprintf("timeout after %v", c.t.Timeout)
	case out.ExitCode < 0 && out.Signal == syscall.SIGKILL && c.r.ledger.stoppedBy() == 0:
		return "killed by SIGKILL, which runall did not send: the kernel's OOM killer may have " +
			"(out of host memory: see dmesg, or the Pod's OOMKilled status)"
	case out.ExitCode < 0 && out.Signal != 0:
		return "killed by " + proc.SignalName(out.Signal)
	case out.ExitCode < 0:
		return "killed by a signal"
	}
	return fmt.Sprintf("exit code %d", out.ExitCode)
}

// tailBuffer keeps the last lines of each stream for the failure report.
type tailBuffer struct {
	mu     sync.Mutex
	stdout []string
	stderr []string
}

const tailKeep = 20

func (b *tailBuffer) add(stream, line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf := &b.stdout
	if stream == "stderr" {
		buf = &b.stderr
	}
	if len(*buf) >= tailKeep {
		*buf = append((*buf)[:0], (*buf)[1:]...)
	}
	*buf = append(*buf, line)
}

func (b *tailBuffer) lines(stream string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if stream == "stderr" {
		return slices.Clone(b.stderr)
	}
	return slices.Clone(b.stdout)
}
