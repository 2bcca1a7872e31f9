package runner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
)

// commandResult is what runCommand tells its caller.
type commandResult struct {
	ok       bool     // succeeded, or failed with ignore-failure
	oom      bool     // ran out of memory (GPU, or host: the OOM killer) and goes again, after its trial is released
	need     uint64   // the need it goes again with
	why      string   // why it waits again ("": it ran out of GPU memory)
	exported []string // variables it exported (sequential tasks)
}

// outcome is what the scheduler is told: a trial that ran out of GPU memory goes back to
// the line.
func (cr commandResult) outcome() sched.Outcome {
	if !cr.oom {
		return sched.Outcome{}
	}
	return sched.Outcome{Requeue: true, Reason: cmp.Or(cr.why, admit.RequeueReason(cr.need))}
}

// command is one command task while it runs: the executor's hooks for it. They keep its
// log, the tails of its output for the failure report, its metrics, and whether it ran out
// of GPU memory; they tell the run's stream what happens.
type command struct {
	life       *lifecycle
	mask       *masker
	gpu        *admit.Admitter // its placement's admitter; nil without one
	t          *plan.Task
	p          *admit.Placement
	host       hostAttempt // its room in host memory, and the OOM kills that end it
	h          *executor.Handle
	log        *taskLog
	cmd        string // the command line as prepared
	before     int    // attempts in earlier admissions (a requeued trial's steps)
	passedOver int    // told on the first attempt's start

	tails   tailBuffer
	attempt int            // the attempt that runs now
	oom     bool           // the current attempt printed a GPU out-of-memory error
	said    admit.OOM      // what its error messages said
	fatal   error          // why it cannot run here at all, found when it ran out of memory
	requeue *commandResult // set when an attempt sent the trial back to the line
	metrics metric.Set     // what it reported in its output, then its metrics file
	reader  *metric.Reader // reads metrics from its stdout into metrics, in the task's formats
}

func (c *command) hooks() executor.Hooks {
	return executor.Hooks{Started: c.started, Line: c.onLine, Ended: c.ended}
}

// onStart ties an attempt's process group to the trial's rooms in GPU and host memory.
func (c *command) onStart(pgid int) {
	if c.p != nil {
		c.gpu.Started(c.p, pgid)
	}
	c.host.started(pgid)
}

// started announces an attempt.
func (c *command) started(n int) {
	attempt := c.before + n
	c.attempt, c.oom, c.said = attempt, false, admit.OOM{}
	c.reader.Restart()
	c.host.restart()
	c.log.mark("%s attempt %d: %s", time.Now().Format(time.RFC3339), attempt, c.mask.Replace(c.cmd))
	ev := event.Event{Kind: event.TaskStarted, Task: c.t, Attempt: attempt, PassedOver: c.passedOver}
	if c.p != nil {
		ev.Devices, ev.Need = c.p.UUIDs, c.p.Need
	}
	c.life.emit(ev)
}

// onLine takes one line of the command's output; the executor calls it serially per attempt.
func (c *command) onLine(n int, stream, line string) {
	line = c.mask.Replace(line)
	c.tails.add(stream, line)
	if stream == "stdout" {
		c.reader.Line(line)
	}
	if c.p != nil {
		c.oom = c.oom || admit.IsOOM(line)
		c.said = c.said.Add(admit.ParseOOM(line))
	}
	c.log.line(line)
	c.life.emit(event.Event{Kind: event.TaskOutput, Task: c.t, Attempt: c.before + n, Stream: stream, Line: line})
}

// metric tells the stream a value the command reported (a runall-metric line as it came, or
// its metrics file at its end).
func (c *command) metric(name string, v float64, step int) {
	c.life.emit(event.Event{Kind: event.TaskMetric, Task: c.t, Attempt: c.attempt, Metric: name, Value: v, Step: step})
}

// ended decides what follows a failed attempt: a retry, the trial back to the line when it
// ran out of GPU memory, or the end.
func (c *command) ended(n int, out proc.Outcome, retry bool) bool {
	t, attempt := c.t, c.before+n
	if out.OK() {
		return false
	}
	reason := c.failureReason(out)
	c.log.mark("attempt %d: %s", attempt, reason)
	if c.h.Stopped() != nil {
		return false
	}
	if c.hostOOM(attempt, out) {
		return false
	}
	if c.oom && c.p != nil && !c.life.halted() {
		need, requeues, err := c.gpu.Requeue(c.p, c.said)
		if err == nil {
			c.requeued(attempt, out, requeues, "out of GPU memory; requeued")
			c.requeue = &commandResult{oom: true, need: need}
			return false
		}
		if errors.Is(err, admit.ErrNeverFits) {
			c.fatal = err // no retry can help
			return false
		}
	}
	if !retry || c.life.halted() {
		return false
	}
	c.life.emit(event.Event{Kind: event.TaskEnded, Task: t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started),
		Reason: fmt.Sprintf("%s; retrying (%d of %d retries left)", reason, t.Retries+1-n, t.Retries)})
	return true
}

// hostOOM takes a failed attempt that the kernel's OOM killer ended: it says so, and sends
// the trial back to the line with a raised need, or fails it when no need can fit or its
// oom-retries are spent. It reports whether the attempt was one.
func (c *command) hostOOM(attempt int, out proc.Outcome) bool {
	why, ok := c.host.oomKilled(out, c.life.halted() || c.life.stoppedBy() != 0)
	if !ok {
		return false
	}
	c.log.mark("attempt %d: %s", attempt, why)
	need, requeues, err := c.host.host.admit.Requeue(c.host.hp)
	if err != nil {
		c.fatal = err
		return true
	}
	c.requeued(attempt, out, requeues, why+"; requeued")
	c.requeue = &commandResult{oom: true, need: need, why: hostadmit.RequeueReason(need)}
	return true
}

// requeued records that an attempt ran out of memory (GPU, or host: the OOM killer) and its
// trial goes again; reason says which.
func (c *command) requeued(attempt int, out proc.Outcome, requeues int, reason string) {
	c.life.emit(event.Event{Kind: event.TaskEnded, Requeued: true, Requeues: requeues, Task: c.t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Reason: reason})
}

// conclude finishes the task by how its last attempt ended, with what it learned (d). One
// that ended, however, after runall was told to stop is stopped, not failed: the stop ended
// it; one a consumer stopped ends with the status it asked for.
func (c *command) conclude(res executor.Result, env []string, d *event.Detail) commandResult {
	t, out, life := c.t, res.Outcome, c.life
	switch stop := life.stoppedBy(); {
	case out.OK():
		exported := proc.ExportedChanges(env, out.Exported)
		c.mask.learn(exported) // before a later task can print them
		life.finish(t, results.StatusOK, 0, "", d)
		return commandResult{ok: true, exported: exported}
	case stop != 0:
		life.finish(t, results.StatusStopped, out.ExitCode,
			fmt.Sprintf("%s: runall was stopped by %s", c.failureReason(out), proc.SignalName(stop)), d)
		return commandResult{}
	case res.Stop != nil:
		life.finish(t, res.Stop.Status, out.ExitCode, c.failureReason(out)+"; stopped: "+res.Stop.Reason, d)
		if res.Stop.Status == results.StatusFailed {
			life.fail(t.StopOnFailure)
		}
		return commandResult{}
	case t.IgnoreFailure:
		life.finish(t, results.StatusIgnored, out.ExitCode, c.failureReason(out)+" (ignored)", d)
		return commandResult{ok: true}
	}
	reason := c.failureReason(out)
	if c.fatal != nil {
		reason += ": " + c.fatal.Error()
	}
	life.finish(t, results.StatusFailed, out.ExitCode, reason, d)
	life.fail(t.StopOnFailure)
	return commandResult{}
}

// failureReason says how an attempt failed. A SIGKILL that runall did not send (no
// timeout, no stop) came from outside, most often from the kernel's OOM killer.
func (c *command) failureReason(out proc.Outcome) string {
	switch {
	case c.host.kill != "":
		return c.host.kill
	case out.Err != nil:
		return out.Err.Error()
	case out.TimedOut:
		return fmt.Sprintf("timeout after %v", c.t.Timeout)
	case out.ExitCode < 0 && out.Signal == syscall.SIGKILL && c.life.stoppedBy() == 0:
		return c.host.outsideKill()
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
