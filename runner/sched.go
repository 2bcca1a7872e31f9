package runner

import (
	"context"
	"slices"
	"sync"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
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
			r.runParallel(ctx, t, env)
			continue
		}
		res, ok := r.runSequential(ctx, t, env)
		if ok {
			env = append(env, res.exported...)
		}
	}
	return env
}

// runSequential runs one top-level command. A GPU task waits for room first, and one that
// runs out of GPU memory goes again with a larger need, as a trial would.
func (r *run) runSequential(ctx context.Context, t *plan.Task, env []string) (commandResult, bool) {
	if t.GPU == nil || r.admit == nil {
		return r.runCommand(ctx, t, env, true, nil), true
	}
	for {
		p, ok := r.waitForGPU(ctx, t)
		if !ok {
			return commandResult{}, false
		}
		res := r.runCommand(ctx, t, env, true, p)
		r.admit.Release(p)
		if !res.oom {
			return res, true
		}
		r.emit(event.Event{Kind: event.TaskWaiting, Task: t, Reason: admit.RequeueReason(res.need)})
	}
}

// waitForGPU blocks a sequential GPU task until a device has room for it.
func (r *run) waitForGPU(ctx context.Context, t *plan.Task) (*admit.Placement, bool) {
	lastReason := ""
	for {
		if r.isHalted() || ctx.Err() != nil {
			r.skip(t, r.ledger.haltReason())
			return nil, false
		}
		changed := r.admit.Changed() // before trying, so that no change is missed
		p, reason, err := r.admit.Place(admit.RequestFor(t))
		if err != nil {
			r.failUnrunnable(t, err.Error())
			return nil, false
		}
		if p != nil {
			return p, true
		}
		if reason != lastReason {
			r.emit(event.Event{Kind: event.TaskWaiting, Task: t, Reason: reason})
			lastReason = reason
		}
		select {
		case <-ctx.Done():
		case <-changed:
		}
	}
}

// trialDone is a parallel child's end, sent to its block's loop.
type trialDone struct {
	task *plan.Task
	p    *admit.Placement
	oom  bool   // ran out of GPU memory and goes again
	need uint64 // with this need
}

// runBlock runs a parallel block: its children concurrently, at most max-parallel-commands
// at once and, for GPU trials, as the admitter allows. Children are offered in the block's
// order (orderTrials); a trial that fits may overtake one that waits, a bounded number of
// times.
func (r *run) runBlock(ctx context.Context, b *plan.Task, env []string) {
	var pending []*plan.Task
	for _, t := range r.orderTrials(b, b.Parallel) {
		if reason, skip := r.resumeSkip(ctx, t); skip {
			r.skip(t, reason)
			continue
		}
		pending = append(pending, t)
	}
	q := r.newTrialQueue(pending)
	done := make(chan trialDone)
	var wg sync.WaitGroup
	defer wg.Wait()
	start := func(t *plan.Task, p *admit.Placement) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done <- r.startTrial(ctx, t, env, p)
		}()
	}
	for q.line.Len() > 0 || q.running > 0 {
		if r.isHalted() {
			for _, t := range q.line.Drain() {
				r.skip(t, r.ledger.haltReason())
			}
		}
		var poll <-chan struct{} // nil: only a trial's end can start another
		if r.admit != nil {
			poll = r.admit.Changed() // before trying, so that no change is missed
		}
		r.admitFrom(q, start)
		if q.running == 0 && q.line.Len() == 0 {
			break
		}
		if q.line.Len() == 0 || q.running >= q.limit {
			poll = nil
		}
		select {
		case d := <-done:
			q.running--
			if d.p != nil {
				r.admit.Release(d.p)
			}
			if d.oom {
				r.emit(event.Event{Kind: event.TaskWaiting, Task: d.task, Reason: admit.RequeueReason(d.need)})
				q.line.Front(d.task)
			}
		case <-poll:
		}
	}
}

// runTrial runs a parallel child: a command, or its own sequence of steps, on its placement.
func (r *run) runTrial(ctx context.Context, t *plan.Task, env []string, p *admit.Placement) trialDone {
	if reason, skip := r.trialGate(); skip { // stop-when met: no new trial starts
		r.skip(t, reason)
		return trialDone{task: t, p: p}
	}
	if len(t.Steps) == 0 {
		res := r.runCommand(ctx, t, env, false, p)
		return trialDone{task: t, p: p, oom: res.oom, need: res.need}
	}
	allOK := true
	for i, s := range t.Steps {
		if r.isHalted() {
			allOK = false
			r.skip(s, r.ledger.haltReason())
			continue
		}
		res := r.runCommand(ctx, s, env, true, p)
		if res.oom {
			// The whole trial goes back to the queue; its finished steps run again.
			return trialDone{task: t, p: p, oom: true, need: res.need}
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
	return trialDone{task: t, p: p}
}

// finish records a task's end and tells the output.
func (r *run) finish(t *plan.Task, status results.Status, exitCode int, reason string) {
	d, attempt := r.ledger.finish(t, status, exitCode, reason)
	r.met.taskFinished(status, d, t.GPU != nil)
	r.emit(event.Event{Kind: event.TaskEnded, Task: t, Attempt: attempt, Status: status, ExitCode: exitCode, Duration: d, Reason: reason})
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
	if !r.ledger.skip(t, reason) {
		return
	}
	r.met.taskFinished(results.StatusSkipped, 0, t.GPU != nil)
	r.emit(event.Event{Kind: event.TaskSkipped, Task: t, Reason: reason})
}
