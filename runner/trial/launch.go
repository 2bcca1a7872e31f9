package trial

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
)

// Launcher runs what the scheduler admits: a trial (a command, or its steps one after
// another) or a top-level command, each command through the executor with its log, its
// environment and its rooms. It tells the stream what happens through its Life, and reads
// what a task ran so far from the run's record of it (Life.Result); it knows nothing of
// where trials come from.
type Launcher struct {
	o       Options
	scripts *scripts
	ranOut  ranOut      // whose script ran to its end as its pause was awaited
	loops   loops       // each command's hangs and failures without progress, across admissions
	exports stepExports // what each step that ended ok exported, for a resumed trial's later steps
}

// Options are what a Launcher is built with: what it needs of the run, each a small
// interface, and pbt's variant.
type Options struct {
	Life        Life
	Rooms       Rooms
	Logs        *Logs
	Scripts     Scripts
	Halt        Halt     // the signals' effect on downloads
	StopWhen    StopWhen // met: no new trial starts
	Uploads     Uploads  // a task's own uploads as it ends
	Mask        Masker
	Checkpoints Checkpoints // nil when no trial sets checkpoint:
	Procs       Processes
	Variant     Variant // nil: every trial runs as written
}

// New is a launcher built with o.
func New(o Options) *Launcher {
	return &Launcher{o: o, scripts: &scripts{o: o.Scripts, halt: o.Halt}}
}

// stepExports are the variables each step of a trial of steps exported, kept for the steps
// that come after it in the trial's next attempt: a resumed trial does not run its steps
// that ended ok again.
type stepExports struct {
	mu   sync.Mutex
	vars map[*plan.Task][]string
}

func (e *stepExports) keep(step *plan.Task, vars []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.vars == nil {
		e.vars = map[*plan.Task][]string{}
	}
	e.vars[step] = vars
}

func (e *stepExports) of(step *plan.Task) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.vars[step]
}

// RunTop runs a top-level command, admitted as a trial of one.
// It is in Procs.Running too, so that the hang watch can end its hung attempt.
func (l *Launcher) RunTop(ctx context.Context, tr *sched.Trial, env []string) Result {
	h := executor.NewHandle(l.o.Procs.Table)
	defer l.o.Procs.Running.Add(tr.Task, h)()
	return l.runCommand(ctx, tr, tr.Task, env, true, h)
}

// RunTrial runs a parallel child: a command, or its own sequence of steps, on its placement.
// While it runs, a consumer may stop it through its Procs.Running.
func (l *Launcher) RunTrial(ctx context.Context, tr *sched.Trial, env []string) sched.Outcome {
	t := tr.Task
	if reason, skip := l.o.StopWhen.Gate(); skip { // stop-when met: no new trial starts
		l.o.Life.Skip(t, reason)
		return sched.Outcome{}
	}
	h := executor.NewHandle(l.o.Procs.Table)
	defer l.o.Procs.Running.Add(t, h)()
	for _, s := range t.Steps {
		defer l.o.Procs.Running.Add(s, h)()
	}
	if len(t.Steps) == 0 {
		return l.runCommand(ctx, tr, t, env, false, h).Outcome()
	}
	allOK := true
	for i, s := range t.Steps {
		if tr.Attempt > 1 && endedOK(l.o.Life, s) {
			// Done before the trial paused: a resumed trial goes on from the step it paused
			// in, with what the steps before it exported.
			env = append(env, l.exports.of(s)...)
			continue
		}
		if l.o.Life.Halted() || h.Stopped() != nil {
			allOK = false
			l.o.Life.Skip(s, l.stepSkipReason(h))
			continue
		}
		res := l.runCommand(ctx, tr, s, env, true, h)
		if res.end == event.EndPause {
			return res.Outcome()
		}
		if res.end == event.EndRequeue {
			// The whole trial goes back to the queue; its finished steps run again.
			return res.Outcome()
		}
		if !res.ok {
			allOK = false
			for _, rest := range t.Steps[i+1:] {
				l.o.Life.Skip(rest, "not started: an earlier step of this trial failed")
			}
			break
		}
		l.exports.keep(s, res.Exported)
		env = append(env, res.Exported...)
	}
	l.o.Uploads.UploadAfter(ctx, t, allOK)
	return sched.Outcome{End: event.EndFinal}
}

// stepSkipReason is why a step of a trial does not start: the run halted, or the trial was
// stopped.
func (l *Launcher) stepSkipReason(h *executor.Handle) string {
	if st := h.Stopped(); st != nil {
		return "not started: the trial was stopped: " + st.Reason
	}
	return l.o.Life.HaltReason()
}

// runCommand runs one command task of trial tr (tr.Task itself, or one of its steps) with
// its retries, through the executor, and tells its end. h is the trial's handle.
func (l *Launcher) runCommand(ctx context.Context, tr *sched.Trial, t *plan.Task, env []string, capture bool, h *executor.Handle) Result {
	run, lineage := l.runnable(tr, t)
	if l.ranOut.ranOut(t, len(lineage)) {
		return l.endRanOut(ctx, t)
	}
	log, err := l.o.Logs.open(t, func(s string) { say(l.o.Life, s) })
	if err != nil {
		l.failUnrunnable(t, "cannot open its log file: "+err.Error()) // a failure like any other: exit 1, stop-on-failure
		return Result{end: event.EndFinal}
	}
	defer log.Close()
	cmdline, dir, err := l.scripts.prepare(ctx, run)
	if err != nil {
		l.failPrepare(t, err) // a failed download, md5 or cwd fails the run too
		return Result{end: event.EndFinal}
	}
	c := &command{run: told{life: l.o.Life}, mask: l.o.Mask, t: t, rooms: l.o.Rooms.Of(tr, run),
		log: log, cmd: cmdline, turn: turn{before: attempts(l.o.Life, t), loop: l.loops.of(t)}, h: h,
		pause: attemptPause{trial: tr.Task, h: h, grace: l.o.Procs.Grace, emit: l.o.Life.Emit}}
	if first := plan.Commands(tr.Task)[0]; first == t {
		c.turn.passedOver = tr.PassedOver
	}
	c.metrics.set.Observe(c.metric)
	c.metrics.reader = metric.NewReader(&c.metrics.set, t.MetricFormats)
	c.metrics.progress = newTrialProgress(c.run, c.t, c.mask, c.log)
	env = plan.TaskVars(run, env)
	for _, r := range c.rooms {
		env = r.Env(env)
	}
	a := proc.Attempt{Cmd: cmdline, Dir: dir, Env: env, Capture: capture, Timeout: t.Timeout,
		Procs: l.o.Procs.Table, KillWait: l.o.Procs.Grace, Mask: l.o.Mask, OnStart: c.onStart}
	hooks := c.hooks()
	var resume *trialResume
	if tr.Task.Checkpoint != nil && l.o.Checkpoints != nil {
		resume = &trialResume{c: c, ckpts: l.o.Checkpoints, trial: tr.Task, dir: dir, lineage: lineage,
			stopped: func() bool { return l.o.Life.StoppedBy() != 0 }}
		hooks = resume.wrap(ctx, hooks)
	}
	res := executor.Run(ctx, executor.Command{Attempt: a, Retries: max(0, t.Retries-c.turn.loop.spent)}, h, hooks)
	if c.next.requeue != nil {
		c.metrics.progress.stop()
		return *c.next.requeue
	}
	d := c.detail(dir, env, res.Outcome)
	if resume != nil {
		d.Resumes = resume.resumes
	}
	d.Lineage = lineage
	if resume != nil {
		d.Lineage = resume.lineage
	}
	cr := c.conclude(res, env, d)
	if !cr.end.Pending() { // a paused or requeued command's uploads wait for its end
		l.o.Uploads.UploadAfter(ctx, t, res.Outcome.OK())
	}
	if cr.ranOut {
		l.ranOut.ranToEnd(t, len(lineage))
	}
	return cr
}

// endRanOut ends ok, unstarted, a command resumed after its script ran to its end as it
// paused (sha or hyperband promoted it, or pbt kept it as it was): started again, it would
// only run its last step again, or, for a script that does not look at RUNALL_RESUMED, all.
func (l *Launcher) endRanOut(ctx context.Context, t *plan.Task) Result {
	say(l.o.Life, t.Name+": not started again: its script ran to its end (exit 0) at its last pause")
	l.o.Life.Finish(t, results.StatusOK, 0, "", nil)
	l.o.Uploads.UploadAfter(ctx, t, true)
	return Result{ok: true, end: event.EndFinal}
}

// failUnrunnable fails a task that can never run here (its log cannot be opened, its script
// not fetched): ignored with ignore-failure, else a failure like any other.
func (l *Launcher) failUnrunnable(t *plan.Task, reason string) {
	if t.IgnoreFailure {
		l.o.Life.Finish(t, results.StatusIgnored, -1, reason+" (ignored)", nil)
		return
	}
	l.o.Life.Finish(t, results.StatusFailed, -1, reason, nil)
	l.o.Life.Fail(t.StopOnFailure)
}

// failPrepare ends a task that could not be prepared: failed, or stopped when a stop
// cancelled its script's download.
func (l *Launcher) failPrepare(t *plan.Task, err error) {
	if stop := l.o.Life.StoppedBy(); stop != 0 && errors.Is(err, context.Canceled) {
		l.o.Life.Finish(t, results.StatusStopped, -1, fmt.Sprintf("%v: runall was stopped by %s", err, proc.SignalName(stop)), nil)
		return
	}
	l.failUnrunnable(t, err.Error())
}

// runnable is what command t of trial tr runs as: pbt's variant of it, made with the values
// the trial goes on with, and the trial's lineage; t itself otherwise. Its events and
// results are t's.
func (l *Launcher) runnable(tr *sched.Trial, t *plan.Task) (*plan.Task, []results.Exploit) {
	if l.o.Variant == nil {
		return t, nil
	}
	v, lineage := l.o.Variant(tr.Task)
	if t == tr.Task {
		return v, lineage
	}
	for i, s := range tr.Task.Steps {
		if s == t && i < len(v.Steps) {
			return v.Steps[i], lineage
		}
	}
	return t, lineage
}

// detail is what the command learned as it ran, for its final event: the tails of its
// output, the memory it held, its metrics (its metrics file read now) and the signal that
// ended its last attempt.
func (c *command) detail(dir string, env []string, out proc.Outcome) *event.Detail {
	d := &event.Detail{StdoutTail: c.tails.lines("stdout"), StderrTail: c.tails.lines("stderr")}
	for _, r := range c.rooms {
		r.Detail(d)
	}
	d.Metrics, d.MetricSeries, d.MetricWarnings = c.readMetrics(dir, env, out.OK())
	d.Progress = c.metrics.progress.stop()
	if out.Signal != 0 {
		d.Signal = proc.SignalName(out.Signal)
	}
	return d
}
