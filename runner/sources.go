package runner

import (
	"context"
	"fmt"
	"slices"
	"syscall"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/trial"
)

// openClaims joins the sweep the run takes its trials from (claimsource.Open): the queue
// under opts.Prefix (--claims), through opts.Store when given, else through the run's S3
// client (conn). It reports whether every trial was already done.
func openClaims(ctx context.Context, opts ClaimsOptions, conn *s3Conn, o claimsource.Options) (*claimsource.Claimer, bool, error) {
	store := opts.Store
	if store == nil {
		client, err := conn.get(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("claims: %w", err)
		}
		if store, err = claims.NewS3(client, opts.Prefix); err != nil {
			return nil, false, err
		}
	}
	o.Lease = opts.Lease
	return claimsource.Open(ctx, store, opts.Prefix, o)
}

// sourceRun is the run as its trial sources see it (claimsource.Run, searchsource.Run): its
// lifecycle, each command's log as the results name it, and the signals' effect on what the
// sources wait for (asks, tells, the joining of a sweep).
type sourceRun struct {
	life    *lifecycle
	logPath func(*plan.Task) string
	halt    *stopping
	variant trial.Variant // what the resources run a trial as (on-oom's halving); nil: as written
}

func newSourceRun(r *runDriver) sourceRun {
	return sourceRun{life: r.life, logPath: r.launch.logs.TaskLogPath, halt: r.launch.halt,
		variant: resource.Variant(r.launch.res, nil)}
}

// Varied says whether the resources run t with params other than its own (on-oom halved
// one). pbt's values are not asked: a search: trial is never one of its rounds.
func (s sourceRun) Varied(t *plan.Task) bool {
	if s.variant == nil {
		return false
	}
	v, _ := s.variant(t)
	return !slices.Equal(v.Params, t.Params)
}

func (s sourceRun) Say(line string)                        { s.life.say(line) }
func (s sourceRun) Emit(ev event.Event)                    { s.life.emit(ev) }
func (s sourceRun) Skip(t *plan.Task, why string)          { s.life.skip(t, why) }
func (s sourceRun) SkipAll(tasks []*plan.Task, why string) { s.life.skipAll(tasks, why) }
func (s sourceRun) FailUnrunnable(t *plan.Task, why string) {
	s.life.failUnrunnable(t, why)
}
func (s sourceRun) Halted() bool              { return s.life.halted() }
func (s sourceRun) StoppedBy() syscall.Signal { return s.life.stoppedBy() }
func (s sourceRun) GivesBack() string         { return s.life.back.reason() }
func (s sourceRun) MaxID() int                { return s.life.ledger.maxID() }
func (s sourceRun) Made(t, block *plan.Task)  { s.life.made.add(t, block) }

func (s sourceRun) UntilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	return s.halt.untilStop(ctx)
}

func (s sourceRun) Recording(ctx context.Context) (context.Context, context.CancelFunc) {
	return s.halt.recording(ctx)
}

// Results is what the ledger holds of t's commands, each log named as results() names it.
func (s sourceRun) Results(t *plan.Task) []results.Task {
	var ts []results.Task
	for _, cmd := range plan.Commands(t) {
		res := s.life.ledger.result(cmd)
		res.LogFile = s.logPath(cmd)
		ts = append(ts, res)
	}
	return ts
}
