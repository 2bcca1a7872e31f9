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
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/framework"
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

// run is the state of one run.
type run struct {
	plan   *plan.Plan
	opts   Options
	id     string
	logDir string
	start  time.Time
	trials map[*plan.Task]bool // the children of parallel blocks

	mask    *masker           // credentials out of everything runall writes
	ledger  *ledger           // every task's result; halted, failed, interrupted
	stream  *event.Stream     // the lifecycle events, to every consumer
	out     *outputPump       // the output's consumer
	procs   *proc.Table       // running commands' process groups
	running *executor.Running // running trials, for consumers that stop one
	logs    *logs             // task logs, log-path files
	scripts *scripts          // url: downloads

	hist    *history.History
	admit   *admit.Admitter     // nil when no task asks for a GPU (or --no-gpu)
	host    *hostadmit.Admitter // nil when no task sets memory:
	hostMem hostadmit.Reader    // the container's memory: its OOM kills tell an outside SIGKILL's cause
	fw      framework.Framework
	sync    *syncer  // nil without S3 transfers
	met     *metrics // nil without --metrics-addr
	claims  *claimer // nil unless trials are claimed (Options.Claims)
	stop    *stopWhen
	halt    *stopping // signals' effect on downloads and the final uploads
}

func newRun(p *plan.Plan, opts Options) (*run, error) {
	opts = opts.withDefaults()
	r := &run{plan: p, opts: opts, id: opts.RunID, procs: proc.NewTable(), running: executor.NewRunning(opts.Grace), halt: newStopping()}
	if r.id == "" {
		r.id = newRunID(time.Now())
	}
	r.mask = secretMasker(opts.Environ, p)
	maskNames(p, r.mask)
	r.ledger = newLedger(r.mask)
	r.plan = applyShard(p, opts.Shard)
	r.stop = newStopWhen(r.plan)
	r.trials = map[*plan.Task]bool{}
	for _, t := range r.plan.Tasks {
		for _, c := range t.Parallel {
			r.trials[c] = true
		}
	}
	r.logDir = filepath.Join(opts.LogDir, r.id)
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		return nil, fmt.Errorf("create log directory: %w (use --log-dir to put logs elsewhere)", err)
	}
	latest := filepath.Join(opts.LogDir, "latest")
	_ = os.Remove(latest)
	_ = os.Symlink(r.id, latest)
	r.scripts = &scripts{dir: filepath.Join(r.logDir, "scripts")}
	r.hist = history.Load(opts.LogDir, p)
	if p.NeedsGPU() && !opts.NoGPU {
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
		r.admit = admit.New(admit.Options{Probe: opts.Probe, Margin: admit.Margin{Bytes: m.Bytes, Fraction: m.Fraction},
			OOMRetries: p.Config.OOMRetries, History: r.hist})
	}
	r.openHost()
	logs, err := openLogs(r.logDir, p.Config.LogPath, r.taskPath)
	if err != nil {
		return nil, err
	}
	r.logs = logs
	return r, nil
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
	return o
}

func newRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return now.Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// taskPath resolves a path from the task file against the run's directory.
func (r *run) taskPath(p string) string {
	if filepath.IsAbs(p) || r.plan.Dir == "" {
		return p
	}
	return filepath.Join(r.plan.Dir, p)
}

// execute runs everything: downloads, tasks, uploads; then the summary.
func (r *run) execute() (*results.Run, error) {
	r.start = time.Now()
	if r.opts.ReapOrphans {
		defer r.reapWhileRunning()()
	}
	if r.opts.MetricsAddr != "" {
		r.met = newMetrics(r.plan)
	}
	r.openStream()
	for _, note := range r.hist.Notes() {
		r.emit(event.Event{Kind: event.RunStatus, Line: note})
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := r.watchSignals(cancel)
	runErr := r.runAll(ctx)
	if r.opts.ReapOrphans {
		proc.StopOrphans(2 * time.Second)
	}
	if err := r.finishSync(); err != nil && runErr == nil {
		runErr = err
	}
	stopSignals()
	return r.end(runErr)
}

// runAll starts what the tasks need (metrics, downloads, GPU sampling) and runs them. A
// failure to start skips every task.
func (r *run) runAll(ctx context.Context) error {
	if r.opts.MetricsAddr != "" {
		stop, err := r.serveMetrics()
		if err != nil {
			r.skipAll(err)
			return err
		}
		defer stop()
	}
	complete, err := r.openClaims(ctx)
	if err != nil {
		r.skipAll(err)
		return err
	}
	if complete {
		return r.skipComplete(ctx)
	}
	if err := r.startSync(ctx); err != nil {
		r.skipAll(err)
		if r.ledger.stoppedBy() != 0 {
			return nil // a signal cancelled the downloads: the exit code is the signal's
		}
		return err
	}
	if r.admit != nil {
		w := newMemoryWatch(r)
		defer w.close() // after the sampler has stopped
		r.admit.Start(ctx, w.sample)
		defer r.admit.Stop()
	}
	defer r.startHost(ctx)()
	r.runTasks(ctx, r.plan.Tasks, r.baseEnv())
	return r.endClaims(ctx)
}

func (r *run) skipAll(cause error) {
	r.ledger.halt()
	for _, t := range r.plan.Tasks {
		r.skip(t, "not started: "+firstLine(cause.Error()))
	}
}

// end writes the results, the history and the summary, and says how the run ended.
func (r *run) end(runErr error) (*results.Run, error) {
	res := r.results()
	r.hist.Record(res, r.tasksByID())
	if err := r.hist.Save(); err != nil {
		r.emit(event.Event{Kind: event.RunStatus, Line: "could not save run history: " + err.Error()})
	}
	if err := r.record(res); err != nil && runErr == nil {
		runErr = err
	}
	r.emit(event.Event{Kind: event.RunEnded, Status: res.Status})
	closeErr := r.out.close(res)
	r.logs.close()
	_, failed, interrupted := r.ledger.status()
	failed = failed || r.claims != nil && r.claims.sweepFailed()
	switch {
	case runErr != nil:
		return res, runErr
	case interrupted != 0:
		return res, &InterruptedError{Signal: interrupted}
	case failed:
		return res, ErrTaskFailed
	case len(res.LogErrors) > 0:
		return res, r.logs.incomplete()
	}
	return res, closeErr
}

func (r *run) outputOptions() output.Options {
	return output.Options{
		Plan: r.plan, W: r.opts.Stdout, Color: r.opts.Color, Width: r.opts.Width,
		StatusEvery: r.opts.StatusEvery, Now: time.Now,
		Estimate: func(t *plan.Task) (time.Duration, bool) { return r.hist.Duration(t.Key) },
	}
}

// results gathers every command task's result in plan order.
func (r *run) results() *results.Run {
	status, _, _ := r.ledger.status()
	res := &results.Run{
		File: r.plan.File, RunID: r.id, StartedAt: r.start, FinishedAt: time.Now(),
		LogDir: r.logDir, Status: status, Tasks: r.ledger.tasks(r.plan, r.logs.taskLogPath),
	}
	if r.opts.Shard.active() {
		res.Shard = r.opts.Shard.String()
	}
	if r.admit != nil {
		res.LearnedGPUMemory = r.learnedByName()
		res.GPUProcessIDs = r.admit.PIDs().String()
	}
	if r.host != nil {
		res.LearnedHostMemory = r.learnedHostByName()
	}
	res.Objective = objectiveOf(r.plan)
	res.Best = res.Objective.BestTask(res.Tasks)
	res.Stopped = r.stop.stoppedReason()
	res.LogErrors = r.logs.failed.list()
	return res
}

// watchSignals turns SIGINT/SIGTERM into a graceful stop: no new task, SIGTERM to every
// running one, SIGKILL after the grace period; a second SIGINT kills at once.
func (r *run) watchSignals(cancel context.CancelFunc) (stop func()) {
	if r.opts.Signals == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var killTimer *time.Timer
		for {
			select {
			case <-done:
				if killTimer != nil {
					killTimer.Stop()
				}
				return
			case s := <-r.opts.Signals:
				sig, _ := s.(syscall.Signal)
				if r.ledger.interrupt(sig) {
					r.emit(event.Event{Kind: event.RunStatus, Line: fmt.Sprintf("received %s: stopping tasks (SIGKILL in %v)", proc.SignalName(sig), r.opts.Grace)})
					r.procs.Signal(syscall.SIGTERM, true)
					r.halt.first()
					killTimer = time.AfterFunc(r.opts.Grace, func() { r.procs.Signal(syscall.SIGKILL, true) })
					continue
				}
				r.emit(event.Event{Kind: event.RunStatus, Line: fmt.Sprintf("received %s again: killing tasks now", proc.SignalName(sig))})
				r.procs.Signal(syscall.SIGKILL, true)
				r.halt.second() // and gives up on the final uploads
				if r.sync != nil && sig == syscall.SIGINT {
					cancel() // a second Ctrl-C also gives up on uploads
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (r *run) isHalted() bool { return r.ledger.isHalted() }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
