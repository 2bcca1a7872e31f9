package runner

import (
	"context"

	"github.com/runall/runall/runner/order"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/searchsource"
)

// runTasks runs tasks one after another. What a task exports reaches the tasks after it.
// It returns the environment as the last task left it.
func (r *runDriver) runTasks(ctx context.Context, tasks []*plan.Task, env []string) []string {
	for _, t := range tasks {
		if r.life.halted() {
			r.life.skip(t, r.life.haltReason())
			continue
		}
		if t.IsBlock() {
			r.runBlock(ctx, t, env)
			continue
		}
		// A top-level command is a line of one, one at a time: a GPU task waits for room,
		// and one that runs out of GPU memory goes again with a larger need, as a trial.
		var exported []string
		r.schedule(ctx, sched.NewList([]*plan.Task{t}), 1, func(ctx context.Context, tr *sched.Trial) sched.Outcome {
			res := r.launch.run.RunTop(ctx, tr, env)
			exported = res.Exported
			return res.Outcome()
		})
		env = append(env, exported...)
	}
	return env
}

// runBlock runs a parallel block's trials, at most max-parallel-commands at once and as
// the resources allow.
func (r *runDriver) runBlock(ctx context.Context, b *plan.Task, env []string) {
	if r.claims != nil {
		defer r.claims.ReleaseAll()
	}
	src := r.source(ctx, b)
	wrapped := r.pause.wrap(src)
	r.schedule(ctx, wrapped, max(r.plan.Config.MaxParallel, 1),
		func(ctx context.Context, tr *sched.Trial) sched.Outcome { return r.launch.run.RunTrial(ctx, tr, env) })
	r.pause.done(wrapped)
	if s, ok := src.(*searchsource.Source); ok {
		s.Finish()
	}
}

// schedule runs a source's trials through the scheduler, run running each admitted one.
func (r *runDriver) schedule(ctx context.Context, src sched.Source, limit int, run func(context.Context, *sched.Trial) sched.Outcome) {
	life := r.life
	sched.Run(ctx, src, sched.Options{
		Limit: limit, Resources: resource.Sched(r.launch.res), Run: run,
		Halted: func() (string, bool) {
			if !life.halted() {
				return "", false
			}
			return life.haltReason(), true
		},
		Emit: life.stream.Emit,
		Skip: life.skip,
		Fail: func(t *plan.Task, err error) { life.failUnrunnable(t, err.Error()) },
	})
}

// source is where a parallel block's trials come from: the claims queue shared with other
// runalls, or the block itself in its order (order.Trials), less what earlier runs did.
func (r *runDriver) source(ctx context.Context, b *plan.Task) sched.Source {
	if r.claims != nil {
		return r.claims.Source(b)
	}
	if t := searchsource.Child(b); t != nil {
		return searchsource.New(searchsource.Options{Run: newSourceRun(r), Stop: r.launch.stop, Mask: r.launch.mask,
			Plan: r.plan, Env: r.env.base}, b, t)
	}
	var pending []*plan.Task
	for _, t := range order.Trials(b, b.Parallel, r.hist) {
		if reason, skip := r.s3.resumeSkip(ctx, t); skip {
			r.life.skip(t, reason)
			continue
		}
		pending = append(pending, t)
	}
	return sched.NewList(pending)
}
