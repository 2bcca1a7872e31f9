package event

// End is how an attempt ended (a TaskEnded's End), and what follows it: the task runs
// again at once (a retry), goes back to the waiting line (a requeue), waits to be resumed
// from its checkpoint (a pause), or has ended for good (final). It is one value where
// there were three booleans that could be set together, and every reader switches on it.
//
// The zero value is EndNone, not one of the four: every event but TaskEnded carries it,
// and a TaskEnded that forgot to say its end would otherwise pass for a retry or a final
// end and be acted on as one (a task that never ends, or one ended twice). The stream
// drops a TaskEnded with no end, as it drops any transition that cannot happen, so the
// mistake shows as a missing end in every view and in Emit's result.
//
// The scheduler is told the same value (sched.Outcome.End): EndRequeue puts the trial
// back at the front of the line, EndPause gives it back to its source, EndFinal ends it;
// EndNone there means no attempt ran (its source gave it back, or it was skipped).
type End uint8

const (
	EndNone    End = iota // not the end of an attempt: every event but TaskEnded
	EndRetry              // the attempt failed and the command runs again at once
	EndRequeue            // it ran out of memory: its trial goes back to the line with a larger need
	EndPause              // it stopped at its checkpoint, to be resumed later (status paused)
	EndFinal              // the task ended for good, with its status
)

func (e End) String() string {
	if e > EndFinal {
		return "end(?)"
	}
	return [...]string{"none", "retry", "requeue", "pause", "final"}[e]
}

// Pending reports whether the task waits to run again after an attempt that ended this
// way (a requeue or a pause): it is pending, not running and not ended.
func (e End) Pending() bool { return e == EndRequeue || e == EndPause }
