package runner

import "time"

// EventKind says what happened.
type EventKind int

const (
	TaskWaiting  EventKind = iota // a trial is ready but not admitted; Reason says why
	TaskStarted                   // an attempt began
	TaskOutput                    // one line of output; Stream is "stdout" or "stderr"
	TaskEnded                     // an attempt ended; Status, ExitCode, Duration set
	TaskSkipped                   // the task will not run; Reason says why
	SyncProgress                  // an S3 transfer made progress; Line is a human summary
	RunStatus                     // periodic: what runs and what waits (Line is a summary)
	RunEnded                      // the run is over; Status is the overall status
)

func (k EventKind) String() string {
	return [...]string{"waiting", "start", "output", "end", "skipped", "sync", "status", "run-end"}[k]
}

// Status is the outcome of a task or run.
type Status string

const (
	StatusPending Status = "pending"
	StatusRunning Status = "running"
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusIgnored Status = "ignored" // failed with ignore-failure: counts as success
	StatusSkipped Status = "skipped" // never ran: stop-on-failure, tags, shard, resume, interrupt
)

// Event is one thing that happened during a run. Events flow from the scheduler to the one
// goroutine that owns the output.
type Event struct {
	Kind     EventKind
	Time     time.Time
	Task     *Task  // nil for run-level events
	Attempt  int    // 1 for the first attempt
	Stream   string // TaskOutput: "stdout" or "stderr"
	Line     string // TaskOutput: the line without its newline; RunStatus/SyncProgress: text
	Reason   string // TaskWaiting, TaskSkipped, TaskEnded (e.g. "timeout after 5m", "out of GPU memory, requeued")
	Status   Status // TaskEnded, RunEnded
	ExitCode int    // TaskEnded; -1 when killed by a signal
	Duration time.Duration
	Devices  []string // TaskStarted: the GPU UUIDs the trial was placed on
}
