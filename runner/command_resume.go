package runner

import (
	"context"

	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// trialResume is a command of a trial with checkpoint: as its attempts restore and keep
// the trial's checkpoint directory.
type trialResume struct {
	ckpts   *checkpoints
	trial   *plan.Task
	dir     string       // the command's working directory
	cur     *ckptAttempt // the attempt running now
	step    int          // the step it resumed from; 0 when it started fresh
	resumes []results.Resume
	stopped func() bool // whether runall was stopped (the last copy gets --grace)
}

// prepare readies attempt n: the checkpoint restored (or the directory emptied), the
// metric series cut back to what the restored checkpoint holds, the environment that
// tells the script.
func (c *command) prepare(ctx context.Context, n int, env []string) ([]string, error) {
	r := c.resume
	a, env, err := r.ckpts.begin(ctx, r.trial, r.dir, env, c.before+n, func(line string) {
		c.log.mark("%s", line)
		c.life.emit(event.Event{Kind: event.RunStatus, Task: c.t, Line: c.t.Name + ": " + line})
	})
	if err != nil {
		return env, err
	}
	r.cur, r.step = a, 0
	var series map[string][]float64
	if a.base != nil {
		r.step, series = a.base.Step, seriesValues(a.base.Series)
		r.resumes = mergeResumes(r.resumes, a.keeper.Resumes())
	}
	// The attempt's series is the kept one: values an earlier attempt reported past its
	// last kept copy are reported again by this one.
	c.metrics.Seed(series)
	return env, nil
}

// resumeStep is the step the current attempt goes on from: 0 unless it resumed.
func (c *command) resumeStep() int {
	if c.resume == nil {
		return 0
	}
	return c.resume.step
}

// checkpointLine takes a runall-checkpoint line of the script's stdout.
func (c *command) checkpointLine(line string) {
	if c.resume == nil || c.resume.cur == nil {
		return
	}
	step, ok, err := checkpoint.ParseLine(line)
	switch {
	case err != nil:
		c.metrics.Warn("%v", err)
	case ok:
		c.resume.cur.keeper.Said(step)
	}
}

// keepMetric hands a value the script reported to its checkpoint's keeper: the step count
// a copy holds, and the series a resumed attempt goes on from.
func (c *command) keepMetric(name string, v float64, step int) {
	if c.resume != nil && c.resume.cur != nil {
		c.resume.cur.keeper.Metric(name, v, step)
	}
}

// endAttempt keeps the checkpoint directory as the attempt left it.
func (c *command) endAttempt() {
	if c.resume == nil || c.resume.cur == nil {
		return
	}
	c.resume.ckpts.end(c.resume.trial, c.resume.cur, c.resume.stopped())
	c.resume.cur = nil
}
