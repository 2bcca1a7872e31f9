package runner

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// serve starts the run's server (Options.Server) and says where it listens.
func (r *runDriver) serve(start time.Time) error {
	v := View{
		Results: func() *results.Run { return r.snapshot(start) },
		Metrics: r.met.Handler(),
		OpenLog: r.launch.logs.OpenServed,
	}
	addr, err := r.opts.Server.Serve(v)
	if err != nil {
		return err
	}
	r.life.say("serving the live report on http://" + addr + "/ (Prometheus metrics on http://" + addr + "/metrics)")
	return nil
}

// sweepFigures is View.Sweep: the figures of the claims sweep joined, once it is.
func sweepFigures(joined *atomic.Pointer[claimsource.Claimer]) func(context.Context, time.Duration) (claimsource.Figures, bool) {
	return func(ctx context.Context, fresh time.Duration) (claimsource.Figures, bool) {
		c := joined.Load()
		if c == nil {
			return claimsource.Figures{}, false
		}
		return c.Figures(ctx, fresh), true
	}
}

// snapshot is the run's results as they stand: the results of its end, gathered now, with
// status running and no finish time, and the tasks not yet told of pending.
func (r *runDriver) snapshot(start time.Time) *results.Run {
	res := r.gather(start, results.StatusPending)
	res.Status, res.FinishedAt = results.StatusRunning, time.Time{}
	return res
}

// gather gathers the run's results (it started at start): every command task's in plan
// order, unseen the status of a task no event told of (skipped once the run ended: it
// never started; pending while the run goes on).
func (r *runDriver) gather(start time.Time, unseen results.Status) *results.Run {
	status, _, _ := r.life.outcome()
	logs := r.launch.logs
	res := &results.Run{
		File: r.plan.File, RunID: r.opts.Record.RunID, StartedAt: start, FinishedAt: time.Now(),
		LogDir: r.opts.runDir(), Status: status, Tasks: r.life.ledger.tasks(r.plan, logs.TaskLogPath, unseen),
	}
	if r.opts.Shard.Active() {
		res.Shard = r.opts.Shard.String()
	}
	for _, rs := range r.launch.res {
		rs.Record(res)
	}
	res.LogParams = r.plan.LogParams
	res.Objective, res.Objectives = objectiveOf(r.plan), objectivesOf(r.plan)
	res.Assess()
	res.Stopped = r.launch.stop.Reason()
	res.LogErrors = logs.Failed()
	r.launch.mask.All(res) // the results' gate: every record of the run is made from them
	return res
}

// objectivesOf is config objective's list as the results record it: nil with one.
func objectivesOf(p *plan.Plan) []results.Objective {
	if len(p.Config.Objectives) < 2 {
		return nil
	}
	out := make([]results.Objective, len(p.Config.Objectives))
	for i, o := range p.Config.Objectives {
		out[i] = results.Objective{Metric: o.Metric, Mode: o.Mode}
	}
	return out
}

// objectiveOf is config objective as the results record it (the first of several).
func objectiveOf(p *plan.Plan) *results.Objective {
	if o := p.Config.Objective; o != nil {
		return &results.Objective{Metric: o.Metric, Mode: o.Mode}
	}
	return nil
}
