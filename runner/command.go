package runner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
)

// commandResult is what runCommand tells its caller.
type commandResult struct {
	ok bool // succeeded, or failed with ignore-failure
	// end is how it ended: for good, requeued (it ran out of memory, GPU or host: the OOM
	// killer, and goes again after its trial is released) or paused at its checkpoint.
	end      event.End
	need     uint64   // the need it goes again with
	why      string   // why it waits again ("": it ran out of GPU memory); why it paused
	exported []string // variables it exported (sequential tasks)
}

// outcome is what the scheduler is told: a trial that ran out of GPU memory goes back to
// the line.
func (cr commandResult) outcome() sched.Outcome {
	if cr.end == event.EndRequeue {
		return sched.Outcome{End: cr.end, Reason: cmp.Or(cr.why, admit.RequeueReason(cr.need))}
	}
	return sched.Outcome{End: cr.end, Reason: cr.why}
}

// command is one command task while it runs: the executor's hooks for it. They keep its
// log, the tails of its output for the failure report, its metrics, and what its room in
// GPU and host memory saw of running out; they tell the run's stream what happens. A
// failed attempt is retried, or decides what follows (next): its trial goes back to the
// line with a raised need, or it can never run here.
type command struct {
	life    *lifecycle
	mask    *mask.Masker
	t       *plan.Task
	cmd     string // the command line as prepared
	h       *executor.Handle
	log     *taskLog
	tails   tailBuffer
	gpu     gpuAttempt  // its room on the GPUs, and what its output said of running out there
	host    hostAttempt // its room in host memory, and the OOM kills that end it
	metrics trialMetrics
	turn    turn
	next    verdict
}

// trialMetrics is what a command reported of its metrics: in its output (the reader reads
// its stdout in the task's formats) and its metrics file at its end; and of its progress.
type trialMetrics struct {
	set      metric.Set
	reader   *metric.Reader
	progress trialProgress
}

// turn counts a command's attempts.
type turn struct {
	before     int // attempts in earlier admissions (a requeued trial's steps)
	now        int // the attempt that runs now
	passedOver int // told on the first attempt's start
	// from is what the attempt starts from, told with its start: a resumed trial's kept
	// series and its resumes so far, so that its record while it runs is the one it ends
	// with; nil: nothing (it started fresh, or has no checkpoint).
	from *event.Detail
	// kept is the step the attempt's kept checkpoint held as it ended: where a pause
	// landed, which may be past the step asked; 0: none.
	kept int
}

// verdict is what a failed attempt decided beyond a retry: the trial goes back to the line
// with a new need (requeue), or it can never run here (fatal). Zero: neither.
type verdict struct {
	requeue *commandResult
	fatal   error
}

func (c *command) hooks() executor.Hooks {
	return executor.Hooks{Started: c.started, Line: c.onLine, Ended: c.ended}
}

// onStart ties an attempt's process group to the trial's rooms in GPU and host memory.
func (c *command) onStart(pgid int) {
	c.gpu.started(pgid)
	c.host.started(pgid)
}

// started announces an attempt.
func (c *command) started(n int) {
	attempt := c.turn.before + n
	c.turn.now = attempt
	c.gpu.restart()
	c.metrics.reader.Restart()
	c.metrics.progress.reader.Restart()
	c.host.restart()
	c.log.mark("%s attempt %d: %s", time.Now().Format(time.RFC3339), attempt, c.mask.Replace(c.cmd))
	ev := event.Event{Kind: event.TaskStarted, Task: c.t, Attempt: attempt, PassedOver: c.turn.passedOver, Detail: c.turn.from}
	if p := c.gpu.p; p != nil {
		ev.Devices, ev.Need = p.UUIDs, p.Need
	}
	c.life.emit(ev)
}

// onLine takes one line of the command's output; the executor calls it serially per attempt.
func (c *command) onLine(n int, stream, line string) {
	line = c.mask.Replace(line)
	c.tails.add(stream, line)
	if stream == "stdout" {
		c.metrics.reader.Line(line)
	}
	c.metrics.progress.line(line)
	c.gpu.line(line)
	c.log.line(line)
	c.life.emit(event.Event{Kind: event.TaskOutput, Task: c.t, Attempt: c.turn.before + n, Stream: stream, Line: line})
}

// metric tells the stream a value the command reported (a runall-metric line as it came, or
// its metrics file at its end).
func (c *command) metric(name string, v float64, step int) {
	c.life.emit(event.Event{Kind: event.TaskMetric, Task: c.t, Attempt: c.turn.now, Metric: name, Value: v, Step: step})
	c.metrics.progress.step(name, step)
}

// ended decides what follows a failed attempt: a retry, the trial back to the line when it
// ran out of memory (c.next), or the end.
func (c *command) ended(n int, out proc.Outcome, retry bool) bool {
	t, attempt := c.t, c.turn.before+n
	if out.OK() {
		return false
	}
	c.gpu.mps.check(c.gpu.p)
	reason := c.failureReason(out) + c.gpu.mps.note()
	c.log.mark("attempt %d: %s", attempt, reason)
	if c.h.Stopped() != nil {
		return false
	}
	if v, ranOut := c.ranOut(attempt, out); ranOut {
		c.next = v
		return false
	}
	if !retry || c.life.halted() {
		return false
	}
	c.life.emit(event.Event{Kind: event.TaskEnded, End: event.EndRetry, Task: t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started),
		Reason: fmt.Sprintf("%s; retrying (%d of %d retries left)", reason, t.Retries+1-n, t.Retries)})
	return true
}

// ranOut decides for an attempt that ran out of memory: the kernel's OOM killer took it
// (memory:), or its output said the GPU ran out. Its trial goes back to the line with a
// raised need, or fails when no need can fit or, for host memory, its oom-retries are
// spent (a GPU trial whose oom-retries are spent is retried or fails as any other).
// ranOut is false when it did not run out, or may not go again.
func (c *command) ranOut(attempt int, out proc.Outcome) (verdict, bool) {
	if m := &c.gpu.mps; m.bystanderOf() && !c.life.halted() && m.iso.requeueBystander(c.t.ID) {
		why := m.bystander()
		c.requeued(attempt, out, 0, why)
		return verdict{requeue: &commandResult{end: event.EndRequeue, need: c.gpu.p.Need, why: why}}, true
	}
	if why, ok := c.host.oomKilled(out, c.life.halted() || c.life.stoppedBy() != 0); ok {
		c.log.mark("attempt %d: %s", attempt, why)
		need, requeues, err := c.host.requeue()
		if err != nil {
			return verdict{fatal: err}, true
		}
		c.requeued(attempt, out, requeues, why+"; requeued")
		return verdict{requeue: &commandResult{end: event.EndRequeue, need: need, why: hostadmit.RequeueReason(need)}}, true
	}
	if !c.gpu.ranOut() || c.life.halted() {
		return verdict{}, false
	}
	need, requeues, err := c.gpu.requeue()
	switch {
	case err == nil:
		c.requeued(attempt, out, requeues, "out of GPU memory; requeued")
		return verdict{requeue: &commandResult{end: event.EndRequeue, need: need}}, true
	case errors.Is(err, admit.ErrNeverFits):
		return verdict{fatal: err}, true // no retry can help
	}
	return verdict{}, false
}

// requeued records that an attempt ran out of memory (GPU, or host: the OOM killer) and its
// trial goes again; reason says which.
func (c *command) requeued(attempt int, out proc.Outcome, requeues int, reason string) {
	c.life.emit(event.Event{Kind: event.TaskEnded, End: event.EndRequeue, Requeues: requeues, Task: c.t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Reason: reason})
}

// conclude finishes the task by how its last attempt ended, with what it learned (d). One
// that ended, however, after runall was told to stop is stopped, not failed: the stop ended
// it; one a consumer stopped ends with the status it asked for.
func (c *command) conclude(res executor.Result, env []string, d *event.Detail) commandResult {
	t, out, life := c.t, res.Outcome, c.life
	switch stop := life.stoppedBy(); {
	case out.OK() && c.pauseAtEnd(&res):
		return c.paused(res, d)
	case out.OK():
		exported := proc.ExportedChanges(env, out.Exported)
		c.mask.Learn(exported) // before a later task can print them
		life.finish(t, results.StatusOK, 0, "", d)
		return commandResult{ok: true, end: event.EndFinal, exported: exported}
	case stop != 0:
		life.finish(t, results.StatusStopped, out.ExitCode,
			fmt.Sprintf("%s: runall was stopped by %s", c.failureReason(out), proc.SignalName(stop)), d)
		return commandResult{end: event.EndFinal}
	case res.Stop != nil && res.Stop.Status == results.StatusPaused:
		return c.paused(res, d)
	case res.Stop != nil:
		// runall stopped it on purpose (early stopping, a lost claim): why is the reason; the
		// signal it was sent to end it, and the exit code that made, are not.
		life.finish(t, res.Stop.Status, out.ExitCode, "stopped: "+res.Stop.Reason, d)
		if res.Stop.Status == results.StatusFailed {
			life.fail(t.StopOnFailure)
		}
		return commandResult{end: event.EndFinal}
	case c.gpu.mps.bystanderOf() && life.halted():
		// The run stopped requeueing (a failure halted it): a bystander is stopped, not failed.
		life.finish(t, results.StatusStopped, out.ExitCode, c.gpu.mps.bystander()+"; not requeued: the run is stopping", d)
		return commandResult{end: event.EndFinal}
	case t.IgnoreFailure:
		life.finish(t, results.StatusIgnored, out.ExitCode, c.failureReason(out)+" (ignored)", d)
		return commandResult{ok: true, end: event.EndFinal}
	}
	reason := c.failureReason(out) + c.gpu.mps.note()
	if c.next.fatal != nil {
		reason += ": " + c.next.fatal.Error()
	}
	life.finish(t, results.StatusFailed, out.ExitCode, reason, d)
	life.fail(t.StopOnFailure)
	return commandResult{end: event.EndFinal}
}

// pauseAtEnd reports whether an attempt that ended ok ends as the pause asked of its trial
// for its round, and sets res.Stop to it: it exited 0 as it was paused (a script that saves
// and exits on SIGTERM), or it ended on its own before its copy landed, and the copy its
// end kept holds the round's step. Either way it reached the round, which decides it.
func (c *command) pauseAtEnd(res *executor.Result) bool {
	if c.life.halted() {
		return false
	}
	if res.Stop != nil {
		return res.Stop.Status == results.StatusPaused
	}
	a := c.h.Awaiting()
	if a == nil || a.Status != results.StatusPaused || c.turn.kept < max(a.At, 1) {
		return false
	}
	res.Stop = &a.Stop
	return true
}

// paused ends the attempt as paused: not an end, the trial is pending again and resumes
// from its checkpoint when its source offers it again.
func (c *command) paused(res executor.Result, d *event.Detail) commandResult {
	out := res.Outcome
	reason := res.Stop.Reason
	if c.turn.kept > 0 {
		reason = fmt.Sprintf("paused at step %d (its kept checkpoint): %s", c.turn.kept, reason)
	}
	c.life.emit(event.Event{Kind: event.TaskEnded, End: event.EndPause, Task: c.t, Attempt: c.turn.now, Status: results.StatusPaused,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Reason: reason, Detail: d})
	return commandResult{end: event.EndPause, why: reason}
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
	if n := len(*buf); n > 0 && strings.HasSuffix((*buf)[n-1], "\r") {
		(*buf)[n-1] = line // a bar's update: the next one draws over it
		return
	}
	if len(*buf) >= tailKeep {
		*buf = append((*buf)[:0], (*buf)[1:]...)
	}
	*buf = append(*buf, line)
}

func (b *tailBuffer) lines(stream string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf := b.stdout
	if stream == "stderr" {
		buf = b.stderr
	}
	out := slices.Clone(buf)
	for i, l := range out {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}
