package runner

import (
	"context"
	"slices"
	"syscall"

	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/shard"
	"github.com/runall/runall/runner/stopwhen"
	"github.com/runall/runall/runner/trial"
)

// launcher is the run's side of runner/trial's launcher: the parts of the run it is built
// from, each lent to it as one of trial's small interfaces. run is built once the run's
// consumers are (build): pbt's variant is given to it then, never rewired after.
type launcher struct {
	life    *lifecycle
	procs   trial.Processes
	logs    *trial.Logs
	scripts trial.Scripts
	halt    *stopping       // the signals' effect on downloads (signals.go)
	stop    *stopwhen.Watch // met: no new trial starts
	sync    *transfers      // a task's own uploads as it ends
	mask    *mask.Masker
	res     []resource.Resource // the resources trials are admitted by, in the order admission asks them, and each running trial's room in them
	ckpts   *checkpoints        // trials' checkpoint: directories; nil when no trial sets one
	variant trial.Variant
	run     *trial.Launcher // nil until build
}

// build makes the trial launcher from the run's parts.
func (l *launcher) build() *trial.Launcher {
	o := trial.Options{Life: trialLife{l.life}, Rooms: trialRooms{l.res}, Logs: l.logs,
		Scripts: l.scripts, Halt: trialHalt{l.halt}, StopWhen: l.stop, Uploads: trialUploads{l.sync},
		Mask: l.mask, Procs: l.procs,
		Variant: resource.Variant(l.res, l.variant)}
	if l.ckpts != nil {
		o.Checkpoints = l.ckpts
	}
	l.run = trial.New(o)
	return l.run
}

// trialLife is the run's lifecycle as a trial's launcher tells it.
type trialLife struct{ l *lifecycle }

func (t trialLife) Emit(ev event.Event) { t.l.emit(ev) }
func (t trialLife) Result(task *plan.Task) results.Task {
	return t.l.ledger.sofar(task)
}
func (t trialLife) Halted() bool              { return t.l.halted() }
func (t trialLife) StoppedBy() syscall.Signal { return t.l.stoppedBy() }
func (t trialLife) HaltReason() string        { return t.l.haltReason() }
func (t trialLife) Fail(stopOnFailure bool)   { t.l.fail(stopOnFailure) }
func (t trialLife) Skip(task *plan.Task, reason string) {
	t.l.skip(task, reason)
}
func (t trialLife) Finish(task *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail) {
	t.l.finish(task, status, exitCode, reason, d)
}

// trialRooms are a trial's rooms in the resources the run admits by.
type trialRooms struct{ list []resource.Resource }

func (t trialRooms) Of(tr *sched.Trial, run *plan.Task) []trial.Room {
	return resource.TrialRooms(t.list, tr, run)
}

// trialHalt is the signals' effect on a trial's downloads.
type trialHalt struct{ s *stopping }

func (t trialHalt) UntilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	return t.s.untilStop(ctx)
}

// trialUploads are a task's own uploads as it ends (none without S3: s nil).
type trialUploads struct{ s *transfers }

func (t trialUploads) UploadAfter(ctx context.Context, task *plan.Task, ok bool) {
	t.s.uploadAfter(ctx, task, ok)
}

// baseEnv is runall's environment plus what identifies the run to its tasks. It is
// clipped: whoever appends to it gets a copy, so that the parts sharing it never see
// each other's changes.
func baseEnv(environ []string, runID, logDir string, shard shard.Shard) []string {
	env := slices.Clone(environ)
	env = envlist.Set(env, "RUNALL_RUN_ID", runID)
	env = envlist.Set(env, "RUNALL_LOG_DIR", logDir)
	if shard.Active() {
		env = envlist.Set(env, "RUNALL_SHARD", shard.String())
	}
	return slices.Clip(env)
}
