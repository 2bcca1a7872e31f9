package runner

import (
	"context"
	"slices"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
)

// runTasks runs tasks one after another. What a task exports reaches the tasks after it.
// It returns the environment as the last task left it.
func (r *run) runTasks(ctx context.Context, tasks []*plan.Task, env []string) []string {
	for _, t := range tasks {
		if r.isHalted() {
			r.skip(t, r.ledger.haltReason())
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
			res := r.runCommand(ctx, tr, t, env, true, executor.NewHandle(r.procs))
			exported = res.exported
			return res.outcome()
		})
		env = append(env, exported...)
	}
	return env
}

// runBlock runs a parallel block's trials, at most max-parallel-commands at once and as
// the resources allow.
func (r *run) runBlock(ctx context.Context, b *plan.Task, env []string) {
	if r.claims != nil {
		defer r.claims.releaseAll()
	}
	src := r.source(ctx, b)
	r.schedule(ctx, src, max(r.plan.Config.MaxParallel, 1),
		func(ctx context.Context, tr *sched.Trial) sched.Outcome { return r.runTrial(ctx, tr, env) })
	if s, ok := src.(*searchSource); ok {
		s.wait()
	}
}

// schedule runs a source's trials through the scheduler, run running each admitted one.
func (r *run) schedule(ctx context.Context, src sched.Source, limit int, run func(context.Context, *sched.Trial) sched.Outcome) {
	var resources []sched.Resource
	if r.host != nil {
		resources = append(resources, sched.Host{Admitter: r.host})
	}
	if r.admit != nil {
		resources = append(resources, sched.GPU{Admitter: r.admit})
	}
	sched.Run(ctx, src, sched.Options{
		Limit: limit, Resources: resources, Run: run,
		Halted: func() (string, bool) {
			if !r.isHalted() {
				return "", false
			}
			return r.ledger.haltReason(), true
		},
		Emit: r.stream.Emit,
		Skip: r.skip,
		Fail: func(t *plan.Task, err error) { r.failUnrunnable(t, err.Error()) },
	})
}

// source is where a parallel block's trials come from: the claims queue shared with other
// runalls, or the block itself in its order (orderTrials), less what earlier runs did.
func (r *run) source(ctx context.Context, b *plan.Task) sched.Source {
	if r.claims != nil {
		return r.claims.source(r, b)
	}
	if t := searchChild(b); t != nil {
		return r.newSearchSource(t)
	}
	var pending []*plan.Task
	for _, t := range r.orderTrials(b, b.Parallel) {
		if reason, skip := r.resumeSkip(ctx, t); skip {
			r.skip(t, reason)
			continue
		}
		pending = append(pending, t)
	}
	return sched.NewList(pending)
}

// runTrial runs a parallel child: a command, or its own sequence of steps, on its placement.
// While it runs, a consumer may stop it through r.running.
func (r *run) runTrial(ctx context.Context, tr *sched.Trial, env []string) sched.Outcome {
	t := tr.Task
	if reason, skip := r.trialGate(); skip { // stop-when met: no new trial starts
		r.skip(t, reason)
		return sched.Outcome{}
	}
	h := executor.NewHandle(r.procs)
	defer r.running.Add(t, h)()
	for _, s := range t.Steps {
		defer r.running.Add(s, h)()
	}
	if tr.Lease != nil && tr.Lease.Err() != nil { // lost before it was running: stop it as it starts
		h.Stop(executor.Stop{Status: results.StatusFailed, Reason: tr.Lease.Err().Error()}, 0)
	}
	if len(t.Steps) == 0 {
		return r.runCommand(ctx, tr, t, env, false, h).outcome()
	}
	allOK := true
	for i, s := range t.Steps {
		if r.isHalted() || h.Stopped() != nil {
			allOK = false
			r.skip(s, r.stepSkipReason(h))
			continue
		}
		res := r.runCommand(ctx, tr, s, env, true, h)
		if res.oom {
			// The whole trial goes back to the queue; its finished steps run again.
			return res.outcome()
		}
		if !res.ok {
			allOK = false
			for _, rest := range t.Steps[i+1:] {
				r.skip(rest, "not started: an earlier step of this trial failed")
			}
			break
		}
		env = append(env, res.exported...)
	}
	r.uploadAfter(ctx, t, allOK)
	return sched.Outcome{}
}

// stepSkipReason is why a step of a trial does not start: the run halted, or the trial was
// stopped.
func (r *run) stepSkipReason(h *executor.Handle) string {
	if st := h.Stopped(); st != nil {
		return "not started: the trial was stopped: " + st.Reason
	}
	return r.ledger.haltReason()
}

// finish ends a task for good: its final event, which the results recorder and every other
// consumer take.
func (r *run) finish(t *plan.Task, status results.Status, exitCode int, reason string) {
	now := time.Now()
	d, attempts, metrics := r.ledger.ending(t, now)
	r.emit(event.Event{Kind: event.TaskEnded, Final: true, Time: now, Task: t, Attempt: attempts, Status: status,
		ExitCode: exitCode, Duration: d, Reason: reason, Metrics: metrics})
}

// failUnrunnable fails a task that can never run here (it needs more GPU memory than any
// device has, say).
func (r *run) failUnrunnable(t *plan.Task, reason string) {
	if t.IgnoreFailure {
		r.finish(t, results.StatusIgnored, -1, reason+" (ignored)")
		return
	}
	r.finish(t, results.StatusFailed, -1, reason)
	r.ledger.fail(t.StopOnFailure)
}

// skip marks a task (and everything in it) as not run.
func (r *run) skip(t *plan.Task, reason string) {
	if t.IsBlock() || len(t.Steps) > 0 {
		for _, c := range slices.Concat(t.Parallel, t.Steps) {
			r.skip(c, reason)
		}
		return
	}
	r.emit(event.Event{Kind: event.TaskSkipped, Task: t, Reason: reason})
}
