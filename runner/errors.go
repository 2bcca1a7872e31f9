package runner

import (
	"errors"
	"syscall"

	"github.com/runall/runall/runner/proc"
)

// ErrTaskFailed is returned by Run when a task failed (and its failure was not ignored).
var ErrTaskFailed = errors.New("a task failed")

// InterruptedError is returned by Run when a signal stopped the run.
type InterruptedError struct{ Signal syscall.Signal }

func (e *InterruptedError) Error() string {
	return "interrupted by " + proc.SignalName(e.Signal)
}
