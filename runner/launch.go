package runner

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/framework"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/rounds"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/stopwhen"
)

// launcher runs what the scheduler admits: a trial (a command, or its steps one after
// another) or a top-level command, each command through the executor with its log, its
// environment and its placement. It tells the stream what happens through life; it knows
// nothing of where trials come from.
type launcher struct {
	life    *lifecycle
	procs   processes
	logs    *logs
	scripts *scripts        // url: downloads, directories
	halt    *stopping       // the signals' effect on downloads (signals.go)
	stop    *stopwhen.Watch // met: no new trial starts
	sync    *transfers      // a task's own uploads as it ends
	mask    *mask.Masker
	rooms   rooms        // the resources trials are admitted by, and each running trial's room in them
	ckpts   *checkpoints // trials' checkpoint: directories; nil when no trial sets one
	fw      framework.Framework
	exports stepExports // what each step that ended ok exported, for a resumed trial's later steps
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

// processes are how the launcher's commands run and are stopped: their process groups, the
// running trials (for consumers that stop one), and the grace between SIGTERM and SIGKILL.
type processes struct {
	table   *proc.Table
	running *executor.Running
	grace   time.Duration
}

// runTop runs a top-level command, admitted as a trial of one.
func (l *launcher) runTop(ctx context.Context, tr *sched.Trial, env []string) commandResult {
	return l.runCommand(ctx, tr, tr.Task, env, true, executor.NewHandle(l.procs.table))
}

// runTrial runs a parallel child: a command, or its own sequence of steps, on its placement.
// While it runs, a consumer may stop it through l.procs.running.
func (l *launcher) runTrial(ctx context.Context, tr *sched.Trial, env []string) sched.Outcome {
	t := tr.Task
	if reason, skip := l.stop.Gate(); skip { // stop-when met: no new trial starts
		l.life.skip(t, reason)
		return sched.Outcome{}
	}
	h := executor.NewHandle(l.procs.table)
	defer l.procs.running.Add(t, h)()
	for _, s := range t.Steps {
		defer l.procs.running.Add(s, h)()
	}
	if len(t.Steps) == 0 {
		return l.runCommand(ctx, tr, t, env, false, h).outcome()
	}
	allOK := true
	for i, s := range t.Steps {
		if tr.Attempt > 1 && l.life.ledger.endedOK(s) {
			// Done before the trial paused: a resumed trial goes on from the step it paused
			// in, with what the steps before it exported.
			env = append(env, l.exports.of(s)...)
			continue
		}
		if l.life.halted() || h.Stopped() != nil {
			allOK = false
			l.life.skip(s, l.stepSkipReason(h))
			continue
		}
		res := l.runCommand(ctx, tr, s, env, true, h)
		if res.end == event.EndPause {
			return res.outcome()
		}
		if res.end == event.EndRequeue {
			// The whole trial goes back to the queue; its finished steps run again.
			return res.outcome()
		}
		if !res.ok {
			allOK = false
			for _, rest := range t.Steps[i+1:] {
				l.life.skip(rest, "not started: an earlier step of this trial failed")
			}
			break
		}
		l.exports.keep(s, res.exported)
		env = append(env, res.exported...)
	}
	l.sync.uploadAfter(ctx, t, allOK)
	return sched.Outcome{End: event.EndFinal}
}

// stepSkipReason is why a step of a trial does not start: the run halted, or the trial was
// stopped.
func (l *launcher) stepSkipReason(h *executor.Handle) string {
	if st := h.Stopped(); st != nil {
		return "not started: the trial was stopped: " + st.Reason
	}
	return l.life.haltReason()
}

// runCommand runs one command task of trial tr (tr.Task itself, or one of its steps) with
// its retries, through the executor, and tells its end. h is the trial's handle.
func (l *launcher) runCommand(ctx context.Context, tr *sched.Trial, t *plan.Task, env []string, capture bool, h *executor.Handle) commandResult {
	log, err := l.logs.open(t, l.life.say)
	if err != nil {
		l.life.failUnrunnable(t, "cannot open its log file: "+err.Error()) // a failure like any other: exit 1, stop-on-failure
		return commandResult{end: event.EndFinal}
	}
	defer log.close()
	run, lineage := l.runnable(tr, t)
	cmdline, dir, err := l.scripts.prepare(ctx, run)
	if err != nil {
		failPrepare(l.life, t, err) // a failed download, md5 or cwd fails the run too
		return commandResult{end: event.EndFinal}
	}
	c := &command{life: l.life, mask: l.mask, t: t, host: hostAttempt{host: l.rooms.mem, hp: l.rooms.hostPlacement(tr)},
		log: log, cmd: cmdline, turn: turn{before: l.life.ledger.attempts(t)}, h: h}
	if p := l.rooms.placement(tr); p != nil {
		c.gpu = gpuAttempt{admit: l.rooms.gpu.admit, p: p, mps: mpsAttempt{iso: l.rooms.gpu.iso}}
	}
	if first := trialCommands(tr.Task)[0]; first == t {
		c.turn.passedOver = tr.PassedOver
	}
	c.metrics.set.Observe(c.metric)
	c.metrics.reader = metric.NewReader(&c.metrics.set, t.MetricFormats)
	c.metrics.progress = newTrialProgress(c)
	env = l.taskEnv(run, env, c.gpu.p)
	a := proc.Attempt{Cmd: cmdline, Dir: dir, Env: env, Capture: capture, Timeout: t.Timeout,
		Procs: l.procs.table, KillWait: l.procs.grace, Mask: l.mask, OnStart: c.onStart}
	hooks := c.hooks()
	var resume *trialResume
	if tr.Task.Checkpoint != nil && l.ckpts != nil {
		resume = &trialResume{c: c, ckpts: l.ckpts, trial: tr.Task, dir: dir, lineage: resultLineage(lineage),
			stopped: func() bool { return l.life.stoppedBy() != 0 }}
		hooks = resume.wrap(ctx, hooks)
	}
	res := executor.Run(ctx, executor.Command{Attempt: a, Retries: t.Retries}, h, hooks)
	if c.next.requeue != nil {
		c.metrics.progress.stop()
		return *c.next.requeue
	}
	d := c.detail(dir, env, res.Outcome)
	if resume != nil {
		d.Resumes = resume.resumes
	}
	d.Lineage = resultLineage(lineage)
	if resume != nil {
		d.Lineage = resume.lineage
	}
	cr := c.conclude(res, env, d)
	if cr.end != event.EndPause { // a paused command's uploads wait for its end
		l.sync.uploadAfter(ctx, t, res.Outcome.OK())
	}
	return cr
}

// runnable is what command t of trial tr runs as: pbt's variant of it, made with the values
// the trial goes on with, and the trial's lineage; t itself otherwise. Its events and
// results are t's.
func (l *launcher) runnable(tr *sched.Trial, t *plan.Task) (*plan.Task, []rounds.Exploit) {
	if l.scripts.variant == nil {
		return t, nil
	}
	v, lineage := l.scripts.variant(tr.Task)
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

// taskEnv is the environment a task's command gets: taskVars, and its GPU placement's.
func (l *launcher) taskEnv(t *plan.Task, env []string, p *admit.Placement) []string {
	env = taskVars(t, env)
	if p != nil {
		own := func(name string) bool {
			return slices.ContainsFunc(t.Env, func(v plan.EnvVar) bool { return v.Name == name })
		}
		env = l.fw.Env(env, l.rooms.gpu.admit.DeviceEnv(p), p.Need, p.Total, t.GPU.CapToNeed, own)
		if iso := l.rooms.gpu.iso; iso != nil {
			for _, kv := range iso.env(p, t.GPU.Threads) {
				k, v, _ := strings.Cut(kv, "=")
				env = proc.Setenv(env, k, v)
			}
		}
	}
	return env
}

// detail is what the command learned as it ran, for its final event: the tails of its
// output, the memory it held, its metrics (its metrics file read now) and the signal that
// ended its last attempt.
func (c *command) detail(dir string, env []string, out proc.Outcome) *event.Detail {
	d := &event.Detail{StdoutTail: c.tails.lines("stdout"), StderrTail: c.tails.lines("stderr")}
	c.gpu.detail(d)
	c.host.detail(d)
	d.Metrics, d.MetricSeries, d.MetricWarnings = c.readMetrics(dir, env, out.OK())
	d.Progress = c.metrics.progress.stop()
	if out.Signal != 0 {
		d.Signal = proc.SignalName(out.Signal)
	}
	return d
}
