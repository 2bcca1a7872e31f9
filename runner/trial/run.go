package trial

import (
	"context"
	"syscall"
	"time"

	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
)

// What the launcher needs from the run arrives as these small interfaces, each what one part
// of the run lends it: none is a pointer to the run's parts, and none reaches back into the
// run beyond what it names.

// Life is how the launcher tells the run's one stream what happens to a task, asks whether
// the run goes on, and reads what the run has recorded of a task.
type Life interface {
	Emit(ev event.Event)
	// Result is t's record so far (the ledger's, which takes each event as it is emitted):
	// its attempts, its first start, its status, and the series and resumes its last
	// pause or end carried.
	Result(t *plan.Task) results.Task
	Halted() bool              // no new task starts
	StoppedBy() syscall.Signal // the signal that stopped the run; 0 while it runs on
	HaltReason() string        // why a task that was never started is skipped
	// Finish ends a task for good with its final event; d is what its command learned
	// (nil: it never ran).
	Finish(t *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail)
	Fail(stopOnFailure bool)          // a failure that was not ignored
	Skip(t *plan.Task, reason string) // a task (and everything in it) not run
}

// Rooms are the rooms of a command of trial tr that runs as run (pbt: its variant), in
// the order they are asked what a failed attempt means.
type Rooms interface {
	Of(tr *sched.Trial, run *plan.Task) []Room
}

// Masker hides the run's secrets in what the launcher says, and learns the secrets a task
// exports.
type Masker interface {
	proc.Masker
	Learn(exported []string)
}

// Halt is the signals' effect on what a trial waits for: a stop ends a hanging download.
type Halt interface {
	UntilStop(ctx context.Context) (context.Context, context.CancelFunc)
}

// StopWhen is the run's stop-when: once met, no new trial starts.
type StopWhen interface {
	Gate() (reason string, skip bool)
}

// Uploads are a task's own uploads as it ends (ok: it succeeded).
type Uploads interface {
	UploadAfter(ctx context.Context, t *plan.Task, ok bool)
}

// Checkpoints keep the checkpoint: directories of trials, and restore a trial's before each
// of its attempts (Begin), keeping it as the attempt ends (End: the step kept, -1 none).
type Checkpoints interface {
	Begin(ctx context.Context, t *plan.Task, dir string, env []string, attempt int, say func(string),
		adjust func(*checkpoint.Manifest)) (*Kept, []string, error)
	End(t *plan.Task, a *Kept, stopped bool) int
}

// Kept is one attempt's checkpoint directory as Checkpoints.Begin readied it.
type Kept struct {
	Keeper *checkpoint.Keeper
	Base   *checkpoint.Manifest // what it resumed from; nil: it started fresh
	Dir    string
}

// Processes are how the launcher's commands run and are stopped: their process groups, the
// running trials (for consumers that stop one), and the grace between SIGTERM and SIGKILL.
type Processes struct {
	Table   *proc.Table
	Running *executor.Running
	Grace   time.Duration
}

// Variant is what a trial runs as now (pbt: its command made with the values it goes on
// with) and its lineage.
type Variant func(*plan.Task) (*plan.Task, []results.Exploit)
