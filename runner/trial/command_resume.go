package trial

import (
	"context"
	"slices"

	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// trialResume is a command of a trial with checkpoint: as its attempts restore and keep
// the trial's checkpoint directory: hooks around the command's own.
type trialResume struct {
	c       *command
	ckpts   Checkpoints
	trial   *plan.Task
	dir     string // the command's working directory
	cur     *Kept  // the attempt running now
	step    int    // the step it resumed from; 0 when it started fresh
	resumes []results.Resume
	lineage []results.Exploit // pbt: its exploits so far, the last one's donated steps marked
	stopped func() bool       // whether runall was stopped (the last copy gets --grace)
}

// wrap adds the checkpoint's part to the command's hooks and metric observer.
func (r *trialResume) wrap(ctx context.Context, h executor.Hooks) executor.Hooks {
	started, line, ended := h.Started, h.Line, h.Ended
	h.Prepare = func(n int, env []string) ([]string, error) { return r.prepare(ctx, n, env) }
	h.Started = func(n int) {
		started(n)
		r.c.metrics.reader.Resume(r.step)
	}
	h.Line = func(n int, stream, s string) {
		line(n, stream, s)
		if stream == "stdout" {
			r.line(r.c.mask.Replace(s))
		}
	}
	h.Ended = func(n int, out proc.Outcome, retry bool) bool {
		r.end()
		return ended(n, out, retry)
	}
	r.c.metrics.set.Observe(func(name string, v float64, step int) {
		r.c.metric(name, v, step)
		if r.cur != nil {
			r.cur.Keeper.Metric(name, v, step)
		}
	})
	return h
}

// prepare readies attempt n: the checkpoint restored (or the directory left as it is), the
// metric series cut back to what the restored checkpoint holds, the environment that
// tells the script.
func (r *trialResume) prepare(ctx context.Context, n int, env []string) ([]string, error) {
	c := r.c
	a, env, err := r.ckpts.Begin(ctx, r.trial, r.dir, env, c.turn.before+n, func(line string) {
		c.log.Mark("%s", line)
		c.run.emit(event.Event{Kind: event.RunStatus, Task: c.t, Line: c.t.Name + ": " + line})
	}, r.donated)
	if err != nil {
		return env, err
	}
	r.cur, r.step = a, 0
	c.pause.running(a.Keeper)
	var series map[string][]float64
	if a.Base != nil {
		r.step, series = a.Base.Step, seriesValues(a.Base.Series)
		// Every start is in resumes: one that kept no copy of its own (paused at once,
		// or on its copy's step) is in no manifest, only in the trial's record so far.
		r.resumes = mergeResumes(mergeResumes(resumesOf(c.run.life, c.t), r.resumes), a.Keeper.Resumes())
	}
	// The attempt's series is the kept one: values an earlier attempt reported past its
	// last kept copy are reported again by this one.
	c.metrics.set.Seed(series)
	c.turn.from = nil
	if a.Base != nil {
		c.turn.from = &event.Detail{MetricSeries: series, Resumes: slices.Clone(r.resumes), Lineage: r.lineage}
	}
	return env, nil
}

// line takes a runall-checkpoint line of the script's stdout.
func (r *trialResume) line(s string) {
	if r.cur == nil {
		return
	}
	step, ok, err := checkpoint.ParseLine(s)
	switch {
	case err != nil:
		r.c.metrics.set.Warn("%v", err)
	case ok:
		r.cur.Keeper.Said(step)
	}
}

// end keeps the checkpoint directory as the attempt left it.
func (r *trialResume) end() {
	if r.cur == nil {
		return
	}
	r.c.turn.kept = max(r.ckpts.End(r.trial, r.cur, r.stopped()), 0)
	r.c.pause.running(nil)
	r.cur = nil
}

// seriesValues is a kept series as the metric set takes it: each name's values in step order.
func seriesValues(s map[string][]checkpoint.Point) map[string][]float64 {
	out := make(map[string][]float64, len(s))
	for name, pts := range s {
		for _, p := range pts {
			out[name] = append(out[name], p.Value)
		}
	}
	return out
}

// mergeResumes adds what an attempt lists to what the trial's earlier attempts did.
func mergeResumes(have, more []results.Resume) []results.Resume {
	for _, r := range more {
		seen := false
		for _, h := range have {
			seen = seen || h.RunID == r.RunID && h.At.Equal(r.At)
		}
		if !seen {
			have = append(have, r)
		}
	}
	return have
}
