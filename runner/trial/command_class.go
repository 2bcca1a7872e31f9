package trial

import (
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/failclass"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// saw is what runall itself saw end a failed attempt, for failclass.Of ("": nothing, and
// its exit and output decide): runall was stopped, the timeout ended it, or a room saw it
// (the kernel's OOM killer).
func saw(c *command, out proc.Outcome) failclass.Class {
	switch {
	case c.run.life.StoppedBy() != 0:
		return failclass.Preempted
	case out.TimedOut:
		return failclass.Timeout
	}
	return c.next.class
}

// finalAttempt is the record of the attempt that ends the command: failed in its class, or not
// failed (ok, paused, pruned: no class); a trial a consumer ended as diverged is Diverged.
func finalAttempt(c *command, res executor.Result) *results.Attempt {
	out := res.Outcome
	switch stop := res.Stop; {
	case c.run.life.StoppedBy() != 0 && !out.OK():
		return c.try(out, failclass.Preempted, true)
	case stop != nil && stop.Status == results.StatusDiverged:
		return c.try(out, failclass.Diverged, true)
	case stop != nil && stop.Status != results.StatusFailed:
		a := c.try(out, "", false)
		a.Reason = "stopped: " + stop.Reason
		return a
	case out.OK():
		return c.try(out, "", false)
	}
	return c.try(out, saw(c, out), true)
}

// try is the record of the attempt that ended as out; a failed one gets its class (runall
// saw saw of it, "" nothing: failclass.Of decides from its exit and last lines), its
// signature and its reason.
func (c *command) try(out proc.Outcome, saw failclass.Class, failed bool) *results.Attempt {
	a := &results.Attempt{N: c.turn.now, ExitCode: out.ExitCode, Start: out.Started, End: out.Finished}
	if out.Signal != 0 {
		a.Signal = proc.SignalName(out.Signal)
	}
	if !failed {
		return a
	}
	f := failclass.Attempt{Saw: saw, GPU: c.next.gpu, ExitCode: out.ExitCode, Signal: a.Signal, Unstarted: out.Err != nil,
		Lines: append(c.tails.lines("stdout"), c.tails.lines("stderr")...)}
	class := failclass.Of(f)
	a.Class, a.Signature = string(class), failclass.Signature(class, f)
	a.Reason, _ = c.failureReason(out)
	if hu := c.next.hung; hu != nil && class == failclass.Hung {
		a.Reason = hu.Reason
	}
	return a
}
