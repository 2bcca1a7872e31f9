// Package executor runs one command with its retries and its timeout, and tells the hooks
// it is given of each attempt: started, each line of output, ended. It holds no pointer
// back to the run that called it: what becomes of the results, the logs and the outputs is
// the hooks' business. A running command can be asked to stop with a status of its own
// (see Handle): a consumer of the run's events uses this to stop a trial early.
//
// One command's lifecycle:
//
//	       ┌──────────────────── retry (failed, retries left, not stopped) ◀─┐
//	       ▼                                                                 │
//	Started ──▶ process group spawned ──▶ Line … Line ──▶ Ended(retry?) ─────┤
//	                    ▲                                                    │
//	   Handle.Stop ─────┴─ SIGTERM, SIGKILL after grace                      ▼
//	                                                                Result (last outcome,
//	                                                                 attempts, the Stop)
package executor

import (
	"context"
	"time"

	"github.com/runall/runall/runner/proc"
)

// Command is one command to run, with its retries.
type Command struct {
	Attempt proc.Attempt // the command line, directory, environment, timeout, process table
	Retries int          // how often a failed attempt runs again
}

// Hooks are told of a command's attempts, on the goroutine that called Run (Line on the
// attempt's reader goroutine, one line at a time).
type Hooks struct {
	// Prepare, when set, readies an attempt before it starts (restores the trial's
	// checkpoint) and returns its environment; an error fails the attempt unrun, with the
	// error as its reason, as one that could not start.
	Prepare func(attempt int, env []string) ([]string, error)
	// Started is told an attempt begins; attempt counts from 1.
	Started func(attempt int)
	// Line is told each line of the attempt's output, stream "stdout" or "stderr".
	Line func(attempt int, stream, line string)
	// Ended is told how an attempt ended, and whether the executor would run the command
	// again (it failed, retries are left, no stop was asked). It returns whether to: false
	// ends the command here (the run halted; the trial goes back to the line).
	Ended func(attempt int, out proc.Outcome, retry bool) bool
	// Free, when set, is asked of a failed attempt before Ended: true when it spends none of
	// the command's retries (a hung attempt resumed from its checkpoint).
	Free func(attempt int) bool
}

// Result is how a command ended.
type Result struct {
	Outcome  proc.Outcome // of its last attempt
	Attempts int
	Stop     *Stop // the stop that ended it; nil when none was asked
}

// Run runs c until an attempt succeeds, its retries are spent, Ended says no more, or h
// is stopped. h may be shared by the commands of one trial (its steps).
func Run(ctx context.Context, c Command, h *Handle, hooks Hooks) Result {
	a := c.Attempt
	onStart := a.OnStart
	a.OnStart = func(pgid int) {
		if onStart != nil {
			onStart(pgid)
		}
		h.spawned(pgid)
	}
	var res Result
	spent := 0 // failed attempts that spent a retry
	for n := 1; ; n++ {
		var prepErr error
		if hooks.Prepare != nil {
			a.Env, prepErr = hooks.Prepare(n, c.Attempt.Env)
		}
		hooks.Started(n)
		a.OnLine = func(stream, line string) { hooks.Line(n, stream, line) }
		if prepErr != nil {
			now := time.Now()
			res.Outcome = proc.Outcome{Err: prepErr, ExitCode: -1, Started: now, Finished: now}
		} else {
			res.Outcome = a.Run(ctx)
		}
		res.Attempts = n
		res.Stop = h.Stopped()
		if !res.Outcome.OK() && (hooks.Free == nil || !hooks.Free(n)) {
			spent++
		}
		retry := !res.Outcome.OK() && spent <= c.Retries && res.Stop == nil
		if again := hooks.Ended(n, res.Outcome, retry); !again || !retry {
			return res
		}
	}
}
