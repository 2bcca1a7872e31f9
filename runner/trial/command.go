package trial

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
)

// Result is what a command tells its caller.
type Result struct {
	ok bool // succeeded, or failed with ignore-failure
	// end is how it ended: for good, requeued (a room sent it back to the line: out of
	// memory, an MPS fault's bystander; it goes again after its trial is released) or
	// paused at its checkpoint.
	end      event.End
	need     uint64   // the need it goes again with
	why      string   // why it waits again; why it paused
	ranOut   bool     // paused as its script ended on its own: it ran to its last step
	Exported []string // variables it exported (sequential tasks)
}

// Outcome is what the scheduler is told: a trial a room sent back goes back to the line; a
// paused one waits to be resumed.
func (cr Result) Outcome() sched.Outcome {
	return sched.Outcome{End: cr.end, Reason: cr.why}
}

// command is one command task while it runs: the executor's hooks for it. They keep its
// log, the tails of its output for the failure report, its metrics, and tell its rooms (the
// resources its trial was admitted by: room.go) of its processes and output; they tell the
// run's stream what happens. A failed attempt is retried, or its rooms decide what follows
// (next): its trial goes back to the line, or it can never run here.
type command struct {
	run     told
	mask    Masker
	t       *plan.Task
	cmd     string // the command line as prepared
	h       *executor.Handle
	log     *taskLog
	tails   tailBuffer
	rooms   []Room // asked in this order what a failed attempt means
	metrics trialMetrics
	turn    turn
	next    verdict
	pause   attemptPause // what its rooms are handed to ask for its trial's pause
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
	loop *loop // hung attempts, failed ones in a row without progress, retries spent (command_hang.go)
}

// verdict is what a failed attempt's rooms decided beyond a retry: the trial goes back to
// the line with a new need (requeue), or it can never run here (fatal); and how it ends when
// the run halts as it concludes (halted: stopped with that reason). Zero: none of these.
type verdict struct {
	requeue *Result
	fatal   error
	halted  string
	class   failclass.Class // what a room saw of the failure (Answer.Class)
	hung    *executor.Hung  // the hang watch ended the attempt (command_hang.go)
	gpu     string          // the fault a room saw take its GPU out of service (Answer.GPU)
}

func (c *command) hooks() executor.Hooks {
	return executor.Hooks{Started: c.started, Line: c.onLine, Ended: c.ended, Free: func(n int) bool { return freeAttempt(c, n) }}
}

// onStart ties an attempt's process group to the trial's rooms.
func (c *command) onStart(pgid int) {
	for _, r := range c.rooms {
		r.Started(pgid)
	}
}

// started announces an attempt.
func (c *command) started(n int) {
	attempt := c.turn.before + n
	c.turn.now = attempt
	c.next = verdict{}
	c.metrics.reader.Restart()
	c.metrics.progress.reader.Restart()
	c.log.Mark("%s attempt %d: %s", time.Now().Format(time.RFC3339), attempt, c.mask.Replace(c.cmd))
	ev := event.Event{Kind: event.TaskStarted, Task: c.t, Attempt: attempt, PassedOver: c.turn.passedOver, Detail: c.turn.from}
	for _, r := range c.rooms {
		r.Begin(&ev, &c.pause)
	}
	c.run.emit(ev)
}

// onLine takes one line of the command's output; the executor calls it serially per attempt.
func (c *command) onLine(n int, stream, line string) {
	line = c.mask.Replace(line)
	c.tails.add(stream, line)
	if stream == "stdout" {
		c.metrics.reader.Line(line)
	}
	c.metrics.progress.line(line)
	for _, r := range c.rooms {
		r.Line(line)
	}
	c.log.Line(line)
	c.run.emit(event.Event{Kind: event.TaskOutput, Task: c.t, Attempt: c.turn.before + n, Stream: stream, Line: line})
}

// metric tells the stream a value the command reported (a runall-metric line as it came, or
// its metrics file at its end).
func (c *command) metric(name string, v float64, step int) {
	c.run.emit(event.Event{Kind: event.TaskMetric, Task: c.t, Attempt: c.turn.now, Metric: name, Value: v, Step: step})
	c.metrics.progress.step(name, step)
}

// ended decides what follows a failed attempt: a retry, the trial back to the line when it
// ran out of memory (c.next), or the end.
func (c *command) ended(n int, out proc.Outcome, retry bool) bool {
	t, attempt := c.t, c.turn.before+n
	if out.OK() {
		return false
	}
	for _, r := range c.rooms {
		r.Ended(out)
	}
	reason, note := c.failureReason(out)
	c.log.Mark("attempt %d: %s", attempt, reason+note)
	if c.h.Stopped() != nil {
		return false
	}
	if c.decided(attempt, out) {
		return false
	}
	if why := loopEnds(c); why != "" {
		c.next.fatal = errors.New(why)
		return false
	}
	if c.run.life.Halted() {
		return false
	}
	if c.next.hung != nil {
		hungRequeue(c, attempt, out, c.next.hung)
		return false
	}
	if !retry {
		return false
	}
	c.turn.loop.spent++
	reason = fmt.Sprintf("%s; retrying (%d of %d retries left)", reason, t.Retries+1-c.turn.loop.spent, t.Retries)
	c.run.emit(event.Event{Kind: event.TaskEnded, End: event.EndRetry, Task: t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Try: c.try(out, saw(c, out), true), Reason: reason})
	return true
}

// decided asks the command's rooms, in order, what a failed attempt means, and keeps the
// first answer that ends the command (c.next): its trial goes back to the line, or fails
// with no retry. It is false when no room ended it: the task's retries decide.
func (c *command) decided(attempt int, out proc.Outcome) bool {
	f := Failure{Task: c.t, Out: out, Halted: c.run.life.Halted(), Stopped: c.run.life.StoppedBy() != 0}
	for _, r := range c.rooms {
		a := r.Failed(f)
		if c.next.class == "" {
			c.next.class = a.Class
		}
		if c.next.gpu == "" {
			c.next.gpu = a.GPU
		}
		if a.Halted != "" {
			c.next.halted = a.Halted
		}
		if a.Mark != "" {
			c.log.Mark("attempt %d: %s", attempt, a.Mark)
		}
		switch q := a.Requeue; {
		case a.Fatal != nil:
			c.next.fatal = a.Fatal
			return true
		case q != nil:
			c.requeued(attempt, out, q.Requeues, q.Why)
			c.next.requeue = &Result{end: event.EndRequeue, need: q.Need, why: q.Reason}
			return true
		}
	}
	return false
}

// requeued records that a room sent an attempt's trial back to the line (it ran out of GPU
// or host memory, or was an MPS fault's bystander); reason says which.
func (c *command) requeued(attempt int, out proc.Outcome, requeues int, reason string) {
	c.run.emit(event.Event{Kind: event.TaskEnded, End: event.EndRequeue, Requeues: requeues, Task: c.t, Attempt: attempt, Status: results.StatusFailed,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Reason: reason, Try: c.try(out, saw(c, out), true)})
}

// conclude finishes the task by how its last attempt ended, with what it learned (d). One
// that ended, however, after runall was told to stop is stopped, not failed: the stop ended
// it; one a consumer stopped ends with the status it asked for.
func (c *command) conclude(res executor.Result, env []string, d *event.Detail) Result {
	t, out, life := c.t, res.Outcome, c.run.life
	if d != nil {
		d.Try = finalAttempt(c, res)
	}
	switch stop := life.StoppedBy(); {
	case out.OK() && res.Stop == nil && c.pauseAtEnd(&res):
		r := c.paused(res, d)
		r.ranOut = true // it ended on its own: not stopped, it has nothing left to run
		return r
	case out.OK() && c.pauseAtEnd(&res):
		return c.paused(res, d)
	case out.OK():
		exported := proc.ExportedChanges(env, out.Exported)
		c.mask.Learn(exported) // before a later task can print them
		c.run.finish(t, results.StatusOK, 0, "", d)
		return Result{ok: true, end: event.EndFinal, Exported: exported}
	case stop != 0:
		cause, _ := c.failureReason(out)
		c.run.finish(t, results.StatusStopped, out.ExitCode,
			fmt.Sprintf("%s: runall was stopped by %s", cause, proc.SignalName(stop)), d)
		return Result{end: event.EndFinal}
	case res.Stop != nil && res.Stop.Status == results.StatusPaused:
		return c.paused(res, d)
	case res.Stop != nil && res.Stop.Status == results.StatusPending:
		return backToLine(c, res)
	case res.Stop != nil:
		// runall stopped it on purpose (early stopping, a lost claim): why is the reason; the
		// signal it was sent to end it, and the exit code that made, are not.
		c.run.finish(t, res.Stop.Status, out.ExitCode, "stopped: "+res.Stop.Reason, d)
		if res.Stop.Status == results.StatusFailed {
			life.Fail(t.StopOnFailure)
		}
		return Result{end: event.EndFinal}
	case c.next.halted != "" && life.Halted():
		// The run stopped requeueing (a failure halted it): a room's bystander is stopped, not failed.
		c.run.finish(t, results.StatusStopped, out.ExitCode, c.next.halted, d)
		return Result{end: event.EndFinal}
	case t.IgnoreFailure:
		cause, _ := c.failureReason(out)
		c.run.finish(t, results.StatusIgnored, out.ExitCode, cause+" (ignored)", d)
		return Result{ok: true, end: event.EndFinal}
	}
	cause, note := c.failureReason(out)
	reason := cause + note
	if c.next.fatal != nil {
		reason += ": " + c.next.fatal.Error()
	}
	c.run.finish(t, results.StatusFailed, out.ExitCode, reason, d)
	life.Fail(t.StopOnFailure)
	return Result{end: event.EndFinal}
}

// backToLine ends c's attempt as runall stopped it for its trial to go back to the line (its
// claim was lost): preempted, not failed, and no retry spent.
func backToLine(c *command, res executor.Result) Result {
	c.next.class = failclass.Preempted
	why := "stopped: " + res.Stop.Reason + "; back to the line"
	c.requeued(c.turn.now, res.Outcome, 0, why)
	return Result{end: event.EndRequeue, why: why}
}

// pauseAtEnd reports whether an attempt that ended ok ends as the pause asked of its trial
// for its round, and sets res.Stop to it: it exited 0 as it was paused (a script that saves
// and exits on SIGTERM), or it ended on its own before its copy landed, and the copy its
// end kept holds the round's step. Either way it reached the round, which decides it.
func (c *command) pauseAtEnd(res *executor.Result) bool {
	if c.run.life.Halted() {
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
func (c *command) paused(res executor.Result, d *event.Detail) Result {
	out := res.Outcome
	reason := res.Stop.Reason
	if c.turn.kept > 0 {
		reason = fmt.Sprintf("paused at step %d (its kept checkpoint): %s", c.turn.kept, reason)
	}
	c.run.emit(event.Event{Kind: event.TaskEnded, End: event.EndPause, Task: c.t, Attempt: c.turn.now, Status: results.StatusPaused,
		ExitCode: out.ExitCode, Duration: out.Finished.Sub(out.Started), Reason: reason, Detail: d, Try: c.try(out, "", false)})
	return Result{end: event.EndPause, why: reason}
}

// failureReason says how an attempt failed: in a room's words where one has them (the
// kernel's OOM killer, a SIGKILL runall did not send), else by its exit; and what the rooms
// add (note: an MPS fault's part in it).
func (c *command) failureReason(out proc.Outcome) (reason, note string) {
	stopped := c.run.life.StoppedBy() != 0
	for _, r := range c.rooms {
		cause, n := r.Says(out, stopped)
		if reason == "" {
			reason = cause
		}
		note += n
	}
	if reason != "" {
		return reason, note
	}
	switch {
	case out.Err != nil:
		reason = out.Err.Error()
	case out.TimedOut:
		reason = fmt.Sprintf("timeout after %v", c.t.Timeout)
	case out.ExitCode < 0 && out.Signal != 0:
		reason = "killed by " + proc.SignalName(out.Signal)
	case out.ExitCode < 0:
		reason = "killed by a signal"
	default:
		reason = fmt.Sprintf("exit code %d", out.ExitCode)
	}
	return reason, note
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
