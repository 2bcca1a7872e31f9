// Package event is what the scheduler tells the outputs: a task waited, started, printed a
// line, ended or was skipped; a transfer progressed; the run ended. It knows nothing of the
// scheduler that sends them or the outputs that draw them.
package event

import (
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Kind says what happened.
type Kind int

const (
	TaskWaiting  Kind = iota // a trial is ready but not admitted; Reason says why
	TaskStarted              // an attempt began
	TaskOutput               // one line of output; Stream is "stdout" or "stderr"
	TaskEnded                // an attempt ended; Status, ExitCode, Duration set
	TaskSkipped              // the task will not run; Reason says why
	SyncProgress             // an S3 transfer made progress; Line is a human summary
	RunStatus                // periodic: what runs and what waits (Line is a summary)
	RunEnded                 // the run is over; Status is the overall status
	TaskMemory               // a GPU trial's memory changed; Memory and Peak set
)

func (k Kind) String() string {
	return [...]string{"waiting", "start", "output", "end", "skipped", "sync", "status", "run-end", "memory"}[k]
}

// Event is one thing that happened during a run. Events flow from the scheduler to the one
// goroutine that owns the output.
type Event struct {
	Kind     Kind
	Time     time.Time
	Task     *plan.Task     // nil for run-level events
	Attempt  int            // 1 for the first attempt
	Stream   string         // TaskOutput: "stdout" or "stderr"
	Line     string         // TaskOutput: the line without its newline; RunStatus/SyncProgress: text
	Reason   string         // TaskWaiting, TaskSkipped, TaskEnded (e.g. "timeout after 5m", "out of GPU memory, requeued")
	Status   results.Status // TaskEnded, RunEnded
	ExitCode int            // TaskEnded; -1 when killed by a signal
	Duration time.Duration
	Devices  []string // TaskStarted: the GPU UUIDs the trial was placed on
	Memory   uint64   // TaskMemory: what the trial holds now, bytes (on its fullest device)
	Peak     uint64   // TaskMemory: the most it has held
}
