package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/results"
)

// Options configures a run. The zero value of each field is a sane default.
type Options struct {
	Stdout      io.Writer
	Mode        output.Mode
	Color       bool
	Width       func() int
	StatusEvery time.Duration // plain output's status line (default 30s)

	Environ     []string      // runall's own environment, the base of every task's
	LogDir      string        // default ./.runall/logs; each run writes <LogDir>/<run-id>/
	RunID       string        // default: a timestamp and a random suffix
	ResultsFile string        // --results: a JSON summary of the run
	Grace       time.Duration // between SIGTERM and SIGKILL when stopping (default 20s)

	// Signals delivers SIGINT/SIGTERM/SIGHUP. The first stops the run gracefully (and its
	// downloads at once), a second kills at once and ends the final uploads.
	Signals <-chan os.Signal

	Probe    gpu.Probe // nil when there is no GPU; ProbeErr says why
	ProbeErr error
	NoGPU    bool // run GPU tasks with max-parallel-commands as the only limit
	// HostMemory measures the container's memory for memory: (nil: its memory cgroup, found
	// from /proc).
	HostMemory hostadmit.Reader

	Shard Shard // run only this shard's share of the trials
	Fresh bool  // ignore resume markers from earlier runs

	// Claims is an s3:// prefix through which runalls with the same task file share one
	// queue of its trials (see claims.go); "" = every trial runs here.
	Claims     string
	Lease      time.Duration // how long a claim holds without renewal (default DefaultLease)
	ClaimStore claims.Store  // the queue's store instead of Claims' S3 prefix (tests)

	MetricsAddr string // serve Prometheus metrics here while running ("" = off)

	// Report draws the run's HTML report into its log directory (the CLI passes
	// report.WriteRun); nil: no report. The runner does not know how a report looks.
	Report func(w io.Writer, res *results.Run, samples *results.GPUSamples) error

	// Consumers are told every event of the run, after runall's own consumers (the
	// results, Prometheus, stop-when) and before the output.
	Consumers []event.Consumer

	// ReapOrphans makes runall adopt the processes tasks leave behind and stop them at the
	// end. The CLI sets it; tests running many runs in one process do not.
	ReapOrphans bool
}

// Run runs the plan. It returns ErrTaskFailed when a task failed, an *InterruptedError when
// a signal stopped it, and other errors when it could not run at all.
func Run(p *plan.Plan, opts Options) (*results.Run, error) {
	r, err := newRun(p, opts)
	if err != nil {
		return nil, err
	}
	return r.execute()
}

// run is one run: it composes the parts that do the work (the lifecycle stream and its
// ledger, the launcher, the transfers, the claims, the recorder of its end) and drives
// them in order: start, run the tasks, end. Each part gets what it needs when it is made;
// none reaches back to the run.
type run struct {
	plan   *plan.Plan
	opts   Options // with its defaults; RunID set
	logDir string  // <LogDir>/<run-id>
	start  time.Time
	life   *lifecycle // the one stream of events, and the ledger that records it
	hist   *history.History
	launch *launcher   // runs admitted trials: processes, logs, GPU and host memory
	sync   *transfers  // nil without S3 transfers
	met    *metrics    // nil without --metrics-addr
	claims *claimer    // nil unless trials are claimed (Options.Claims)
	rec    *recorder   // writes what the run leaves when it ends
	out    *outputPump // the outputs' consumer
}

func newRun(p *plan.Plan, opts Options) (*run, error) {
	opts = opts.withDefaults()
	mask := secretMasker(opts.Environ, p)
	maskNames(p, mask)
	r := &run{plan: applyShard(p, opts.Shard), opts: opts, logDir: filepath.Join(opts.LogDir, opts.RunID)}
	r.life = &lifecycle{stream: &event.Stream{}, ledger: newLedger(mask)}
	if err := makeLogDir(opts.LogDir, opts.RunID); err != nil {
		return nil, err
	}
	r.hist = history.Load(opts.LogDir, p)
	gpu, err := openGPU(p, opts, r.hist)
	if err != nil {
		return nil, err
	}
	logs, err := openLogs(r.logDir, p.Config.LogPath, func(path string) string { return taskPath(p.Dir, path) })
	if err != nil {
		return nil, err
	}
	if opts.MetricsAddr != "" {
		r.met = newMetrics(r.plan)
	}
	base := baseEnv(opts, r.logDir)
	halt := newStopping()
	r.sync = newTransfers(r.plan, transferOptions{life: r.life, met: r.met, halt: halt, mask: mask, base: base,
		dir: p.Dir, runID: opts.RunID, trials: trialSet(r.plan), resume: !opts.Fresh && !opts.claiming(),
		live: opts.Mode == output.Live, every: opts.StatusEvery, grace: opts.Grace, stopped: r.stopped})
	r.launch = &launcher{life: r.life, procs: proc.NewTable(), running: executor.NewRunning(opts.Grace), logs: logs,
		scripts: &scripts{dir: filepath.Join(r.logDir, "scripts")}, halt: halt, stop: newStopWhen(r.plan), sync: r.sync,
		mask: mask, gpu: gpu, host: openHost(r.plan, opts.HostMemory, r.hist), dir: p.Dir, base: base, grace: opts.Grace}
	r.rec = &recorder{logDir: r.logDir, resultsFile: opts.ResultsFile, report: opts.Report, sync: r.sync,
		notify: newNotifier(p.Config.Notify, base, mask, opts.Grace), interrupted: r.stopped}
	return r, nil
}

// makeLogDir makes the run's log directory, and points <logDir>/latest at it.
func makeLogDir(logDir, id string) error {
	if err := os.MkdirAll(filepath.Join(logDir, id), 0o755); err != nil {
		return fmt.Errorf("create log directory: %w (use --log-dir to put logs elsewhere)", err)
	}
	latest := filepath.Join(logDir, "latest")
	_ = os.Remove(latest)
	_ = os.Symlink(id, latest)
	return nil
}

// openGPU makes the GPU memory admitter when a task asks for GPU memory; nil otherwise,
// or with --no-gpu.
func openGPU(p *plan.Plan, opts Options, hist *history.History) (*admit.Admitter, error) {
	if !p.NeedsGPU() || opts.NoGPU {
		return nil, nil
	}
	if opts.Probe == nil {
		t := p.FirstGPUTask()
		cause := opts.ProbeErr
		if cause == nil {
			cause = errors.New("no GPU probe")
		}
		return nil, fmt.Errorf("%s: task %q asks for GPU memory, but %w\n"+
			"run with --no-gpu to run these tasks with max-parallel-commands as the only limit, "+
			"or --fake-gpus 32GiB,32GiB to simulate GPUs", t.Pos, t.Name, cause)
	}
	m := p.Config.GPUMemoryMargin
	return admit.New(admit.Options{Probe: opts.Probe, Margin: admit.Margin{Bytes: m.Bytes, Fraction: m.Fraction},
		OOMRetries: p.Config.OOMRetries, History: hist}), nil
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

func (o Options) withDefaults() Options {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Mode == "" {
		o.Mode = output.Plain
	}
	if o.StatusEvery <= 0 {
		o.StatusEvery = 30 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 20 * time.Second
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(".runall", "logs")
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.RunID == "" {
		o.RunID = newRunID(time.Now())
	}
	return o
}

func newRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return now.Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// stopped reports whether a signal stopped the run.
func (r *run) stopped() bool { return r.life.ledger.stoppedBy() != 0 }

// execute runs everything: downloads, tasks, uploads; then the summary.
func (r *run) execute() (*results.Run, error) {
	r.start = time.Now()
	if r.opts.ReapOrphans {
		defer reapWhileRunning(r.launch.procs)()
	}
	r.openStream()
	for _, note := range r.hist.Notes() {
		r.life.say(note)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := watchSignals(r.opts.Signals, r.life, r.launch, r.sync != nil, cancel)
	runErr := r.runAll(ctx)
	if r.opts.ReapOrphans {
		proc.StopOrphans(2 * time.Second)
	}
	if err := r.sync.finish(); err != nil && runErr == nil {
		runErr = err
	}
	stopSignals()
	return r.end(runErr)
}

// runAll starts what the tasks need (metrics, claims, downloads, GPU and host sampling)
// and runs them. A failure to start skips every task.
func (r *run) runAll(ctx context.Context) error {
	skipAll := func(err error) { r.life.skipAll(r.plan.Tasks, "not started: "+firstLine(err.Error())) }
	if r.met != nil {
		stop, err := r.met.serve(r.opts.MetricsAddr, r.life.say)
		if err != nil {
			skipAll(err)
			return err
		}
		defer stop()
	}
	if r.opts.claiming() {
		c, complete, err := openClaims(ctx, r.opts, r.launch.base, claimOptions{life: r.life, plan: r.plan,
			runID: r.opts.RunID, running: r.launch.running, grace: r.opts.Grace, logPath: r.launch.logs.taskLogPath,
			learned: r.learnedGPU})
		if c != nil {
			r.claims = c
			r.life.stream.Add(c)
		}
		if err != nil {
			skipAll(err)
			return err
		}
		if complete {
			return c.skipComplete(ctx)
		}
	}
	if err := r.sync.start(ctx); err != nil {
		skipAll(err)
		if r.stopped() {
			return nil // a signal cancelled the downloads: the exit code is the signal's
		}
		return err
	}
	defer r.startAdmission(ctx)()
	r.runTasks(ctx, r.plan.Tasks, r.launch.base)
	return r.claims.end(ctx)
}

// startAdmission starts measuring the GPUs and the host's memory; the returned func stops it.
func (r *run) startAdmission(ctx context.Context) (stop func()) {
	stopGPU := func() {}
	if gpu := r.launch.gpu; gpu != nil {
		w := newMemoryWatch(r.plan, r.logDir, r.life, r.met)
		gpu.Start(ctx, w.sample)
		stopGPU = func() {
			gpu.Stop()
			w.close() // after the sampler has stopped
		}
	}
	stopHost := r.launch.host.start(ctx, r.life.say, r.met)
	return func() {
		stopHost()
		stopGPU()
	}
}

// learnedGPU reports learned GPU needs by the name of each group's first trial; nil
// without GPU admission.
func (r *run) learnedGPU() map[string]uint64 {
	if r.launch.gpu == nil {
		return nil
	}
	return learnedByName(r.plan, r.hist)
}

// end records the history, ends the run on its stream (whose consumers write the results,
// the report, and notify), closes the output, and says how the run ended.
func (r *run) end(runErr error) (*results.Run, error) {
	res := r.results()
	r.hist.Record(res, tasksByID(r.plan))
	if err := r.hist.Save(); err != nil {
		r.life.say("could not save run history: " + err.Error())
	}
	r.life.emit(event.Event{Kind: event.RunEnded, Status: res.Status, Results: res})
	if err := r.rec.Err(); err != nil && runErr == nil {
		runErr = err
	}
	closeErr := r.out.close(res)
	r.launch.logs.close()
	_, failed, interrupted := r.life.ledger.status()
	failed = failed || r.claims.sweepFailed()
	switch {
	case runErr != nil:
		return res, runErr
	case interrupted != 0:
		return res, &InterruptedError{Signal: interrupted}
	case failed:
		return res, ErrTaskFailed
	case len(res.LogErrors) > 0:
		return res, r.launch.logs.incomplete()
	}
	return res, closeErr
}

// results gathers every command task's result in plan order.
func (r *run) results() *results.Run {
	status, _, _ := r.life.ledger.status()
	logs := r.launch.logs
	res := &results.Run{
		File: r.plan.File, RunID: r.opts.RunID, StartedAt: r.start, FinishedAt: time.Now(),
		LogDir: r.logDir, Status: status, Tasks: r.life.ledger.tasks(r.plan, logs.taskLogPath),
	}
	if r.opts.Shard.active() {
		res.Shard = r.opts.Shard.String()
	}
	if gpu := r.launch.gpu; gpu != nil {
		res.LearnedGPUMemory = r.learnedGPU()
		res.GPUProcessIDs = gpu.PIDs().String()
	}
	if host := r.launch.host; host.admit != nil {
		res.LearnedHostMemory = host.learnedByName(r.plan)
	}
	res.Objective = objectiveOf(r.plan)
	res.Best = res.Objective.BestTask(res.Tasks)
	res.Stopped = r.launch.stop.stoppedReason()
	res.LogErrors = logs.failed.list()
	return res
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
