package runner

import (
	"fmt"
	"path/filepath"

	"github.com/runall/runall/internal/owned"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/gpures"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/hostres"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/notify"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/runner/shard"
	"github.com/runall/runall/runner/stopwhen"
	"github.com/runall/runall/runner/trial"
	"github.com/runall/runall/s3sync"
)

// runDriver is one run: it composes the parts that do the work (the lifecycle stream and its
// ledger, the launcher, the transfers, the claims, the recorder of its end) and drives
// them in order: start, run the tasks, end. Each part gets what it needs when it is made;
// none reaches back to it.
type runDriver struct {
	plan   *plan.Plan
	opts   Options    // with its defaults; RunID set
	life   *lifecycle // the one stream of events, and the ledger that records it
	hist   *history.History
	env    runEnv               // the run's environment and its one S3 client
	launch *launcher            // runs admitted trials: processes, logs, GPU and host memory
	s3     *transfers           // nil without S3 transfers in the task file
	met    *prom.Metrics        // nil without a server (--serve)
	claims *claimsource.Claimer // nil unless trials are claimed (Options.Claims)
	rec    *recorder            // writes what the run leaves when it ends
	out    *outputPump          // the outputs' consumer
	pause  *pauser              // pauses and resumes trials at their checkpoints; nil when none has one
}

// runEnv is what the run's parts start from: its environment and its one S3 client, made
// from the task file's settings and that environment on first use.
type runEnv struct {
	base  []string // the run's environment (baseEnv): every task's starts from it
	s3    *s3Conn
	fresh *freshState // an unfinished --fresh start: what was kept before it is stale
	// container is the container's memory: the report's samples hold it beside the GPUs'.
	container hostadmit.Reader
}

func newRun(p *plan.Plan, opts Options) (*runDriver, error) {
	opts = opts.withDefaults()
	masker := mask.New(opts.Environ, s3sync.SecretEnvNames(), p, notify.Secrets(opts.Environ, p.Config.Notify))
	masker.Tasks(p)
	r := &runDriver{plan: shard.Apply(p, opts.Shard), opts: opts}
	logDir := opts.runDir()
	r.life = newLifecycle(masker)
	r.life.stream.Gate(masker.Event)
	if err := makeLogDir(opts.Record.LogDir, opts.Record.RunID); err != nil {
		return nil, err
	}
	r.hist = history.Load(opts.Record.LogDir, p)
	if err := gpures.Check(gpuOptions(r.plan, opts, r.hist, resourceRun{})); err != nil {
		return nil, err
	}
	base := baseEnv(opts.Environ, opts.Record.RunID, logDir, opts.Shard)
	logs, err := trial.OpenLogs(logDir, p.Config.LogPath, logPaths(p.Dir, base))
	if err != nil {
		return nil, err
	}
	if opts.Server != nil {
		r.met = prom.New(r.plan)
	}
	halt := newStopping(opts.Grace)
	halt.checkpointFirst = opts.Stop.CheckpointFirst
	conn, fresh := newS3Conn(r.plan, base), &freshState{}
	if !opts.claiming() { // a claims sweep's done records say what is left
		fresh = openFresh(opts.Record.LogDir, opts.Record.RunID, opts.Fresh)
	}
	r.s3 = newTransfers(r.plan, transferOptions{life: r.life, met: r.met, mask: masker, conn: conn, base: base, fresh: fresh,
		dir: p.Dir, runID: opts.Record.RunID, trials: trialSet(r.plan), resume: !opts.Fresh && !opts.claiming(),
		show: transferShow{live: opts.Output.Mode == output.Live, every: opts.Output.StatusEvery},
		stop: transferStop{halt: halt, grace: opts.Grace, stopped: r.life.stopped}})
	procs := trial.Processes{Table: proc.NewTable(), Running: executor.NewRunning(opts.Grace), Grace: opts.Grace}
	ckpts := newCheckpoints(checkpointOptions{plan: r.plan, conn: conn, claims: opts.Claims.Prefix,
		local: filepath.Join(opts.Record.LogDir, "state", "checkpoints"), runID: opts.Record.RunID, fresh: opts.Fresh, grace: opts.Grace,
		guard: plan.NewCheckpointGuard(base, p.Dir, opts.Record.LogDir), stale: fresh})
	r.pause = newPauser(procs.Running, ckpts, r.life)
	mem := hostres.Container(opts.Resources.HostMemory)
	res, err := openResources(r.plan, opts, mem, r.hist,
		resourceRun{pause: r.pause, fail: r.life.outOfRoom, met: r.met, ckpts: ckpts})
	if err != nil {
		return nil, err
	}
	r.launch = &launcher{life: r.life, logs: logs, procs: procs, ckpts: ckpts, res: res,
		scripts: trial.Scripts{Dir: filepath.Join(logDir, "scripts"), TaskDir: p.Dir, Base: base}, halt: halt,
		stop: stopwhen.New(r.plan), sync: r.s3, mask: masker}
	r.env = runEnv{base: base, s3: conn, fresh: fresh, container: mem}
	r.rec = &recorder{logDir: logDir, resultsFile: opts.Record.ResultsFile, report: opts.Record.Report, upload: r.s3.uploadResults,
		notify: notify.New(p.Config.Notify, base, masker, opts.Grace), interrupted: r.life.stopped, emit: r.life.emit}
	return r, nil
}

// makeLogDir makes the run's log directory, and points <logDir>/latest at it.
func makeLogDir(logDir, id string) error {
	dir, err := owned.Open(logDir)
	if err == nil {
		defer dir.Close()
		err = dir.MkdirAll(id)
	}
	if err != nil {
		return fmt.Errorf("create log directory: %w (use --log-dir to put logs elsewhere)", err)
	}
	_ = dir.Symlink(id, "latest")
	return nil
}

// trialSet is the plan's trials: the children of its parallel blocks.
func trialSet(p *plan.Plan) map[*plan.Task]bool {
	trials := map[*plan.Task]bool{}
	for _, t := range p.Tasks {
		for _, c := range t.Parallel {
			trials[c] = true
		}
	}
	return trials
}

// learnedGPU reports learned GPU needs by the name of each group's first trial; nil
// without GPU admission.
func (r *runDriver) learnedGPU() map[string]uint64 {
	if !r.plan.NeedsGPU() || r.opts.Resources.NoGPU { // no GPU admission (openGPU)
		return nil
	}
	return gpures.Learned(r.plan, r.hist)
}

// logPaths resolves a log-path: its ${VAR}s expanded as cwd:'s are (against the run's
// environment with task t's params and env:; config's, t nil, against the run's alone; one
// unset or empty is an error), then taken against the task file's directory dir.
func logPaths(dir string, base []string) func(t *plan.Task, path string) (string, error) {
	return func(t *plan.Task, path string) (string, error) {
		env := base
		if t != nil {
			env = plan.TaskVars(t, base)
		}
		p, err := plan.ExpandStrictEnv(path, env)
		if err != nil {
			return "", err
		}
		return plan.TaskPath(dir, p), nil
	}
}
