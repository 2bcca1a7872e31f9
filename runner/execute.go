package runner

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/memwatch"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
)

// Run runs the plan. It returns ErrTaskFailed when a task failed, an *InterruptedError when
// a signal stopped it, and other errors when it could not run at all.
func Run(p *plan.Plan, opts Options) (*results.Run, error) {
	if f := opts.Record.ResultsFile; f != "" {
		if err := outfile.CheckWrite(f, p.Sources()...); err != nil { // before anything runs: runall creates no directory it was not given, nor writes over its task file
			return nil, fmt.Errorf("--results %w", err)
		}
	}
	if err := opts.CheckPlan(p); err != nil {
		return nil, err
	}
	r, err := newRun(p, opts)
	if err != nil {
		return nil, err
	}
	return r.execute()
}

// execute runs everything: downloads, tasks, uploads; then the summary.
func (r *runDriver) execute() (*results.Run, error) {
	start := time.Now()
	if r.opts.Stop.ReapOrphans {
		defer reapWhileRunning(r.launch.procs.Table)()
	}
	r.openStream()
	r.launch.build() // once its consumers are: pbt's variant is the rounds consumer's
	for _, note := range r.hist.Notes() {
		r.life.say(note)
	}
	if note := r.env.fresh.note; note != "" {
		r.life.say(note)
	}
	for _, res := range r.launch.res {
		defer res.Open(r.life.say)() // MPS's daemons stop, however the run ends
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := watchSignals(r.opts.Signals, r.life, r.launch, r.s3 != nil, cancel)
	runErr := r.runAll(ctx, start)
	if r.opts.Stop.ReapOrphans {
		proc.StopOrphans(2 * time.Second)
	}
	if err := r.s3.finish(); err != nil && runErr == nil {
		runErr = err
	}
	stopSignals()
	return r.end(start, runErr)
}

// runAll starts what the tasks need (the server, claims, downloads, GPU and host sampling)
// and runs them (the run started at start). A failure to start skips every task.
func (r *runDriver) runAll(ctx context.Context, start time.Time) error {
	skipAll := func(err error) { r.life.skipAll(r.plan.Tasks, "not started: "+firstLine(err.Error())) }
	if r.opts.Server != nil {
		if err := r.serve(start); err != nil {
			skipAll(err)
			return err
		}
	}
	var joined atomic.Pointer[claimsource.Claimer] // the sweep the watchers read, once joined
	for _, c := range r.opts.Consumers {
		if w, ok := c.(Watcher); ok {
			defer w.WatchRun(View{Results: func() *results.Run { return r.snapshot(start) }, Sweep: sweepFigures(&joined)})()
		}
	}
	if r.opts.claiming() {
		ctx, stop := r.launch.halt.untilStop(ctx) // a stop ends the joining, however long it tries
		defer stop()
		c, complete, err := openClaims(ctx, r.opts.Claims, r.env.s3, claimsource.Options{Run: newSourceRun(r),
			Plan: r.plan, RunID: r.opts.Record.RunID, Running: r.launch.procs.Running, Grace: r.opts.Grace, Key: plan.Key,
			Learned: r.learnedGPU, Mask: r.launch.mask, Objective: objectiveOf(r.plan), Objectives: objectivesOf(r.plan)})
		if err != nil {
			skipAll(err)
			if r.life.stopped() {
				return nil // a signal ended the joining: the exit code is the signal's
			}
			return err
		}
		r.claims = c
		joined.Store(c)
		if complete {
			return c.SkipComplete(ctx)
		}
	}
	if err := r.s3.start(ctx); err != nil {
		skipAll(err)
		if r.life.stopped() {
			return nil // a signal cancelled the downloads: the exit code is the signal's
		}
		return err
	}
	defer r.startAdmission(ctx)()
	r.runTasks(ctx, r.plan.Tasks, r.env.base)
	r.launch.ckpts.dropHeld() // every trial has ended: no late fault takes one back
	return r.claims.End(ctx)
}

// startAdmission starts measuring the resources (the GPUs, the host's memory), keeping
// samples of the GPUs' and the container's memory for the report; the returned func stops it.
func (r *runDriver) startAdmission(ctx context.Context) (stop func()) {
	var w *memwatch.Watch
	run := resource.Run{Say: r.life.say, Met: r.met, Watch: func() *memwatch.Watch {
		if w == nil {
			w = memwatch.New(r.plan, r.opts.runDir(), r.life.emit, r.met, r.env.container)
		}
		return w
	}}
	stops := make([]func(), len(r.launch.res))
	for i := len(r.launch.res) - 1; i >= 0; i-- { // the GPUs first, as they did
		stops[i] = r.launch.res[i].Start(ctx, run)
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
		if w != nil {
			w.Close() // after the samplers have stopped
		}
	}
}

// end records the history, ends the run on its stream (whose consumers write the results,
// the report, and notify), closes the output, and says how the run ended.
func (r *runDriver) end(start time.Time, runErr error) (*results.Run, error) {
	for _, settle := range r.life.settle {
		settle() // every trial has ended: what their consumers still hold goes into the results
	}
	res := r.gather(start, results.StatusSkipped)
	r.hist.Record(res, tasksByID(r.plan))
	for _, res := range r.launch.res {
		res.Ended()
	}
	if err := r.hist.Save(); err != nil {
		r.life.say("could not save run history: " + err.Error())
	}
	r.life.emit(event.Event{Kind: event.RunEnded, Status: res.Status, Results: res})
	res, recErr := r.rec.wait(res)
	lost, closeErr := r.out.close(res)
	if lost != "" {
		fmt.Fprintln(r.opts.Output.Stderr, "runall: "+lost)
	}
	r.launch.logs.Close()
	if !r.life.halted() {
		r.env.fresh.finished() // every trial it had ran (fresh, where a --fresh start was unfinished)
	}
	_, failed, interrupted := r.life.outcome()
	failed = failed || r.claims.SweepFailed()
	switch {
	case runErr != nil:
		return res, runErr
	case interrupted != 0:
		return res, &InterruptedError{Signal: interrupted}
	case failed:
		return res, ErrTaskFailed
	case recErr != nil:
		return res, recErr
	case len(res.LogErrors) > 0:
		return res, r.launch.logs.Incomplete()
	}
	return res, closeErr
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// tasksByID is the plan's tasks by their IDs, as the history records them.
func tasksByID(p *plan.Plan) map[int]*plan.Task {
	byID := map[int]*plan.Task{}
	plan.Walk(p.Tasks, func(t *plan.Task) { byID[t.ID] = t })
	return byID
}
