package runner

import (
	"cmp"
	"context"
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

// runCommand runs one command task of trial tr (tr.Task itself, or one of its steps) with
// its retries, through the executor, and records its result. h is the trial's handle.
func (r *run) runCommand(ctx context.Context, tr *sched.Trial, t *plan.Task, env []string, capture bool, h *executor.Handle) commandResult {
	log, err := r.logs.open(t, func(msg string) { r.emit(event.Event{Kind: event.RunStatus, Line: msg}) })
	if err != nil {
		r.failUnrunnable(t, "cannot open its log file: "+err.Error()) // a failure like any other: exit 1, stop-on-failure
		return commandResult{}
	}
	defer log.close()
	cmdline, dir, err := r.prepare(ctx, t)
	if err != nil {
		r.failPrepare(t, err) // a failed download, md5 or cwd fails the run too
		return commandResult{}
	}
	c := &command{r: r, t: t, p: tr.Placement, hp: tr.HostPlacement, log: log, cmd: cmdline, before: r.ledger.attempts(t), h: h}
	if first := trialCommands(tr.Task)[0]; first == t {
		c.passedOver = tr.PassedOver
	}
	c.metrics.Observe(c.metric)
	c.reader = metric.NewReader(&c.metrics, t.MetricFormats)
	env = r.taskEnv(t, env, c.p)
	a := proc.Attempt{Cmd: cmdline, Dir: dir, Env: env, Capture: capture, Timeout: t.Timeout,
		Procs: r.procs, KillWait: r.opts.Grace, Mask: r.mask}
	a.OnStart = func(pgid int) {
		if c.p != nil {
			r.admit.Started(c.p, pgid)
		}
		c.hostStarted(pgid)
	}
	res := executor.Run(ctx, executor.Command{Attempt: a, Retries: t.Retries}, h, c.hooks())
	if c.requeue != nil {
		return *c.requeue
	}
	r.ledger.update(t, func(rt *results.Task) {
		rt.StdoutTail, rt.StderrTail = c.tails.lines("stdout"), c.tails.lines("stderr")
		if c.p != nil {
			peak, source := r.admit.Peak(c.p)
			rt.PeakGPUMemory, rt.PeakGPUMemorySource = max(rt.PeakGPUMemory, peak), string(source)
			rt.GPUMemory = r.admit.Need(c.p) // a learned or raised need, settled to its peak
		}
		c.recordHost(rt)
	})
	r.recordMetrics(c, dir, env, res.Outcome.OK())
	cr := c.conclude(res, env)
	r.uploadAfter(ctx, t, res.Outcome.OK())
	return cr
}

// command is one command task while it runs: the executor's hooks for it. They keep its
// log, the tails of its output for the failure report, its metrics, and whether it ran out
// of GPU memory; they tell the run's stream what happens.
type command struct {
	r          *run
	t          *plan.Task
	p          *admit.Placement
	hp         *hostadmit.Placement // its room in host memory; nil without a host need
	h          *executor.Handle
	log        *taskLog
	cmd        string // the command line as prepared
	before     int    // attempts in earlier admissions (a requeued trial's steps)
	passedOver int    // told on the first attempt's start

	tails     tailBuffer
	attempt   int            // the attempt that runs now
	oom       bool           // the current attempt printed a GPU out-of-memory error
	hostKill  string         // the current attempt was the kernel's OOM killer's: what it says
	oomBefore uint64         // the container's OOM kill count as the attempt started
	oomKnown  bool           // whether it could be read
	said      admit.OOM      // what its error messages said
	fatal     error          // why it cannot run here at all, found when it ran out of memory
	requeue   *commandResult // set when an attempt sent the trial back to the line
	metrics   metric.Set     // what it reported in its output, then its metrics file
	reader    *metric.Reader // reads metrics from its stdout into metrics, in the task's formats
}

func (c *command) hooks() executor.Hooks {
	return executor.Hooks{Started: c.started, Line: c.onLine, Ended: c.ended}
}

// started announces an attempt.
func (c *command) started(n int) {
	attempt := c.before + n
	c.attempt, c.oom, c.said, c.hostKill = attempt, false, admit.OOM{}, ""
	c.reader.Restart()
	c.noteOOMCount()
	c.log.mark("%s attempt %d: %s", time.Now().Format(time.RFC3339), attempt, c.r.mask.Replace(c.cmd))
	ev := event.Event{Kind: event.TaskStarted, Task: c.t, Attempt: attempt, PassedOver: c.passedOver}
	if c.p != nil {
		ev.Devices, ev.Need = c.p.UUIDs, c.p.Need
	}
	c.r.emit(ev)
}

// onLine takes one line of the command's output; the executor calls it serially per attempt.
func (c *command) onLine(n int, stream, line string) {
	line = c.r.mask.Replace(line)
	c.tails.add(stream, line)
	if stream == "stdout" {
		c.reader.Line(line)
	}
	if c.p != nil {
		c.oom = c.oom || admit.IsOOM(line)
		c.said = c.said.Add(admit.ParseOOM(line))
	}
	c.log.line(line)
	c.r.emit(event.Event{Kind: event.TaskOutput, Task: c.t, Attempt: c.before + n, Stream: stream, Line: line})
}

// metric tells the stream a value the command reported (a runall-metric line as it came, or
// its metrics file at its end).
func (c *command) metric(name string, v float64, step int) {
	c.r.emit(event.Event{Kind: event.TaskMetric, Task: c.t, Attempt: c.attempt, Metric: name, Value: v, Step: step})
}

// ended decides what follows a failed attempt: a retry, the trial back to the line when it
// ran out of GPU memory, or the end.
func (c *command) ended(n int, out proc.Outcome, retry bool) bool {
	r, t, attempt := c.r, c.t, c.before+n
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
	if c.oom && c.p != nil && !r.isHalted() {
		need, requeues, err := r.admit.Requeue(c.p, c.said)
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
	if !retry || r.isHalted() {
		return false
	}
	r.emit(event.Event{Kind: event.TaskEnded, Task: t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started),
		Reason: fmt.Sprintf("%s; retrying (%d of %d retries left)", reason, t.Retries+1-n, t.Retries)})
	return true
}

// requeued records that an attempt ran out of memory (GPU, or host: the OOM killer) and its
// trial goes again; reason says which.
func (c *command) requeued(attempt int, out proc.Outcome, requeues int, reason string) {
	c.r.ledger.update(c.t, func(res *results.Task) { res.OOMRequeues = requeues })
	c.r.emit(event.Event{Kind: event.TaskEnded, Requeued: true, Task: c.t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Reason: reason})
}

// conclude finishes the task by how its last attempt ended. One that ended, however, after
// runall was told to stop is stopped, not failed: the stop ended it; one a consumer stopped
// ends with the status it asked for.
func (c *command) conclude(res executor.Result, env []string) commandResult {
	t, out := c.t, res.Outcome
	if out.Signal != 0 {
		c.r.ledger.update(t, func(res *results.Task) { res.Signal = proc.SignalName(out.Signal) })
	}
	switch stop := c.r.ledger.stoppedBy(); {
	case out.OK():
		exported := proc.ExportedChanges(env, out.Exported)
		c.r.mask.learn(exported) // before a later task can print them
		c.r.finish(t, results.StatusOK, 0, "")
		return commandResult{ok: true, exported: exported}
	case stop != 0:
		c.r.finish(t, results.StatusStopped, out.ExitCode,
			fmt.Sprintf("%s: runall was stopped by %s", c.failureReason(out), proc.SignalName(stop)))
		return commandResult{}
	case res.Stop != nil:
		c.r.finish(t, res.Stop.Status, out.ExitCode, c.failureReason(out)+"; stopped: "+res.Stop.Reason)
		if res.Stop.Status == results.StatusFailed {
			c.r.ledger.fail(t.StopOnFailure)
		}
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
	case c.hostKill != "":
		return c.hostKill
	case out.Err != nil:
		return out.Err.Error()
	case out.TimedOut:
		return fmt.Sprintf("timeout after %v", c.t.Timeout)
	case out.ExitCode < 0 && out.Signal == syscall.SIGKILL && c.r.ledger.stoppedBy() == 0:
		return c.outsideKill()
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
