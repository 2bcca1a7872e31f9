package runner

import (
	"io"
	"time"
)

// Output renders a run for people or machines. One goroutine (the scheduler's output pump)
// calls its methods, in order, so implementations need no locking.
type Output interface {
	// Event renders one event.
	Event(ev Event)
	// Tick is called every OutputOptions.Tick while the run lasts: the live view redraws,
	// the plain output prints its periodic status line when StatusEvery has passed.
	Tick(now time.Time)
	// Close ends the output (the live view restores the cursor) and prints the summary.
	Close(res *Results) error
}

// OutputOptions configures every Output.
type OutputOptions struct {
	Plan        *Plan
	W           io.Writer // usually stdout
	Color       bool      // escape codes for colour allowed (live view only; NO_COLOR clears it)
	Width       func() int
	Height      func() int    // live view: terminal rows, which a frame must fit (nil or 0: 24)
	StatusEvery time.Duration // plain: a line saying what runs and what waits (default 30s)
	// Estimate is how long a task took in earlier runs of the same file, for the live view's
	// ETA; ok is false when there is no history.
	Estimate func(t *Task) (d time.Duration, ok bool)
	Now      func() time.Time
}

// Results is the outcome of a run: what --results writes and the summary prints.
type Results struct {
	File       string       `json:"file"`
	RunID      string       `json:"run_id"`
	Shard      string       `json:"shard,omitempty"` // "I/N" when sharded
	Status     Status       `json:"status"`          // ok, failed, or interrupted (as "failed")
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at"`
	LogDir     string       `json:"log_dir"`
	Tasks      []TaskResult `json:"tasks"`
	// LearnedGPUMemory is the need learned for each gpu-memory: auto group, by group name
	// (the first trial's name), in bytes.
	LearnedGPUMemory map[string]uint64 `json:"learned_gpu_memory,omitempty"`
}

// TaskResult is one command task's outcome. Blocks and sequences are not listed; their
// commands are.
type TaskResult struct {
	ID            int       `json:"id"`
	Name          string    `json:"name"`
	Cmd           string    `json:"cmd"`
	Status        Status    `json:"status"`
	ExitCode      int       `json:"exit_code"` // -1 when killed by a signal or never started
	Attempts      int       `json:"attempts"`
	OOMRequeues   int       `json:"oom_requeues"`
	StartedAt     time.Time `json:"started_at,omitzero"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	Reason        string    `json:"reason,omitempty"` // why it failed or was skipped
	Devices       []string  `json:"devices,omitempty"`
	GPUMemory     uint64    `json:"gpu_memory,omitempty"`      // the need it was admitted with, bytes
	PeakGPUMemory uint64    `json:"peak_gpu_memory,omitempty"` // the most it was seen using, bytes
	LogFile       string    `json:"log_file,omitempty"`
	StdoutTail    []string  `json:"-"` // last lines, for the failure report
	StderrTail    []string  `json:"-"`
}

// Duration is how long the task ran, 0 when it never started.
func (r TaskResult) Duration() time.Duration {
	if r.StartedAt.IsZero() || r.FinishedAt.IsZero() {
		return 0
	}
	return r.FinishedAt.Sub(r.StartedAt)
}
