package runner

import (
	"errors"
	"syscall"

	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/trial"
)

// ErrTaskFailed is returned by Run when a task failed (and its failure was not ignored).
var ErrTaskFailed = errors.New("a task failed")

// InterruptedError is returned by Run when a signal stopped the run.
type InterruptedError struct{ Signal syscall.Signal }

func (e *InterruptedError) Error() string {
	return "interrupted by " + proc.SignalName(e.Signal)
}

// ErrIncompleteRecord is a run whose record (its tasks' logs, its results, its report) could
// not all be written: its exit code is 1 even when every task succeeded.
var ErrIncompleteRecord = trial.ErrIncompleteRecord
