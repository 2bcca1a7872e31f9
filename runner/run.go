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
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/gpu"
)

// OutputMode picks how a run is shown.
type OutputMode string

const (
	OutputLive  OutputMode = "live"  // a terminal: a line per task, redrawn
	OutputPlain OutputMode = "plain" // containers, CI, pipes: prefixed lines, no escape codes
	OutputJSON  OutputMode = "json"  // one JSON object per event
)

// Options configures a run. The zero value of each field is a sane default.
type Options struct {
	Stdout      io.Writer
	Mode        OutputMode
	Color       bool
	Width       func() int
	StatusEvery time.Duration // plain output's status line (default 30s)

	Environ     []string      // runall's own environment, the base of every task's
	LogDir      string        // default ./.runall/logs; each run writes <LogDir>/<run-id>/
	RunID       string        // default: a timestamp and a random suffix
	ResultsFile string        // --results: a JSON summary of the run
	Grace       time.Duration // between SIGTERM and SIGKILL when stopping (default 20s)

	// Signals delivers SIGINT/SIGTERM. The first stops the run gracefully, a second SIGINT
	// kills at once.
	Signals <-chan os.Signal

	Probe    gpu.Probe // nil when there is no GPU; ProbeErr says why
	ProbeErr error
	NoGPU    bool // run GPU tasks with max-parallel-commands as the only limit

	Shard Shard // run only this shard's share of the trials
	Fresh bool  // ignore resume markers from earlier runs

	MetricsAddr string // serve Prometheus metrics here while running ("" = off)

	// ReapOrphans makes runall adopt the processes tasks leave behind and stop them at the
	// end. The CLI sets it; tests running many runs in one process do not.
	ReapOrphans bool
}

// Shard is this process's share of a sweep spread over several: trial k (in file order,
// counting every parallel block's children) runs in shard k mod Count.
type Shard struct{ Index, Count int }

func (s Shard) active() bool { return s.Count > 1 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Run runs the plan. It returns ErrTaskFailed when a task failed, an *InterruptedError when
// a signal stopped it, and other errors when it could not run at all.
func Run(plan *Plan, opts Options) (*Results, error) {
	r, err := newRun(plan, opts)
	if err != nil {
		return nil, err
	}
	return r.execute()
}

// run is the state of one run.
type run struct {
	plan   *Plan
	opts   Options
	id     string
	logDir string
	out    Output
	events chan Event
	procs  *procTable
	mask   *strings.Replacer
	hist   *history
	admit  *admitter // nil when no task asks for a GPU (or --no-gpu)
	sync   *syncer   // nil without S3 transfers
	met    *metrics  // nil without --metrics-addr
	start  time.Time

	mu          sync.Mutex
	byID        map[int]*TaskResult // results of command tasks, by Task.ID
	trials      map[*Task]bool      // the children of parallel blocks
	halted      bool                // no new task starts
	failed      bool                // a task failed and its failure was not ignored
	interrupted syscall.Signal      // 0 unless a signal stopped the run

	combined   *lockedFile // config log-path: every task's output
	extraLogs  map[string]*lockedFile
	extraLogMu sync.Mutex
	scriptMu   sync.Mutex // one download per url:, also when parallel children share it
}

func newRun(plan *Plan, opts Options) (*run, error) {
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Mode == "" {
		opts.Mode = OutputPlain
	}
	if opts.StatusEvery <= 0 {
		opts.StatusEvery = 30 * time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = 20 * time.Second
	}
	if opts.LogDir == "" {
		opts.LogDir = filepath.Join(".runall", "logs")
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	r := &run{
		plan:      plan,
		opts:      opts,
		id:        opts.RunID,
		procs:     newProcTable(),
		byID:      map[int]*TaskResult{},
		extraLogs: map[string]*lockedFile{},
	}
	if r.id == "" {
		r.id = newRunID(time.Now())
	}
	r.mask = secretMasker(opts.Environ, plan)

	r.applyShard()
	r.trials = map[*Task]bool{}
	for _, t := range r.plan.Tasks {
		for _, c := range t.Parallel {
			r.trials[c] = true
		}
	}
	if plan.NeedsGPU() && !opts.NoGPU {
		if opts.Probe == nil {
			t := firstGPUTask(plan)
			cause := opts.ProbeErr
			if cause == nil {
				cause = errors.New("no GPU probe")
			}
			return nil, fmt.Errorf("%s: task %q asks for GPU memory, but %w\n"+
				"run with --no-gpu to run these tasks with max-parallel-commands as the only limit, "+
				"or --fake-gpus 32GiB,32GiB to simulate GPUs", t.Pos, t.Name, cause)
		}
		r.admit = newAdmitter(opts.Probe, plan.Config)
	}

	r.logDir = filepath.Join(opts.LogDir, r.id)
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		return nil, fmt.Errorf("create log directory: %w (use --log-dir to put logs elsewhere)", err)
	}
	latest := filepath.Join(opts.LogDir, "latest")
	_ = os.Remove(latest)
	_ = os.Symlink(r.id, latest)
	r.hist = loadHistory(opts.LogDir, plan.File)
	if r.admit != nil {
		r.admit.learned = r.hist.Learned
	}
	if plan.Config.LogPath != "" {
		f, err := openAppend(r.taskPath(plan.Config.LogPath))
		if err != nil {
			return nil, fmt.Errorf("config log-path: %w", err)
		}
		r.combined = f
	}
	return r, nil
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
func (r *run) execute() (*Results, error) {
	r.start = time.Now()
	if r.opts.ReapOrphans {
		becomeSubreaper()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(2 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					reapZombies(r.procs)
				}
			}
		}()
	}
	outOpts := OutputOptions{
		Plan: r.plan, W: r.opts.Stdout, Color: r.opts.Color, Width: r.opts.Width,
		StatusEvery: r.opts.StatusEvery, Estimate: r.hist.estimate, Now: time.Now,
	}
	switch r.opts.Mode {
	case OutputLive:
		r.out = NewLiveOutput(outOpts)
	case OutputJSON:
		r.out = NewJSONOutput(outOpts)
	default:
		r.out = NewPlainOutput(outOpts)
	}
	r.events = make(chan Event, 4096)
	pumpDone := make(chan struct{})
	go r.pump(pumpDone)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := r.watchSignals(cancel)

	var runErr error
	if r.opts.MetricsAddr != "" {
		stop, err := r.serveMetrics()
		if err != nil {
			runErr = err
		} else {
			defer stop()
		}
	}
	if runErr == nil {
		runErr = r.startSync(ctx)
	}
	if runErr == nil {
		if r.admit != nil {
			r.admit.start(ctx, r.onGPUSample)
		}
		r.runTasks(ctx, r.plan.Tasks, r.baseEnv())
		if r.admit != nil {
			r.admit.stop()
		}
	} else {
		r.halt()
		for _, t := range r.plan.Tasks {
			r.skip(t, "not started: "+firstLine(runErr.Error()))
		}
	}
	if r.opts.ReapOrphans {
		stopOrphans(2 * time.Second)
	}
	if err := r.finishSync(); err != nil && runErr == nil {
		runErr = err
	}
	stopSignals()

	res := r.results()
	if err := r.hist.save(res); err != nil {
		r.emit(Event{Kind: RunStatus, Line: "could not save run history: " + err.Error()})
	}
	r.emit(Event{Kind: RunEnded, Status: res.Status})
	close(r.events)
	<-pumpDone
	if r.combined != nil {
		r.combined.Close()
	}
	for _, f := range r.extraLogs {
		f.Close()
	}
	closeErr := r.out.Close(res)
	if r.opts.ResultsFile != "" {
		if err := writeResults(r.opts.ResultsFile, res); err != nil && runErr == nil {
			runErr = err
		}
	}
	switch {
	case runErr != nil:
		return res, runErr
	case r.interrupted != 0:
		return res, &InterruptedError{Signal: r.interrupted}
	case r.failed:
		return res, ErrTaskFailed
	}
	return res, closeErr
}

// pump is the one goroutine that talks to the Output.
func (r *run) pump(done chan<- struct{}) {
	defer close(done)
	interval := r.plan.Config.UpdateInterval
	if interval <= 0 || r.opts.Mode != OutputLive {
		interval = 250 * time.Millisecond
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-r.events:
			if !ok {
				return
			}
			r.out.Event(ev)
		case now := <-tick.C:
			r.out.Tick(now)
		}
	}
}

func (r *run) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	r.events <- ev
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
				r.mu.Lock()
				first := r.interrupted == 0
				if first {
					r.interrupted = sig
				}
				r.halted = true
				r.mu.Unlock()
				if first {
					r.emit(Event{Kind: RunStatus, Line: fmt.Sprintf("received %v: stopping tasks (SIGKILL in %v)", sig, r.opts.Grace)})
					r.procs.signal(syscall.SIGTERM, true)
					killTimer = time.AfterFunc(r.opts.Grace, func() { r.procs.signal(syscall.SIGKILL, true) })
					continue
				}
				r.emit(Event{Kind: RunStatus, Line: fmt.Sprintf("received %v again: killing tasks now", sig)})
				r.procs.signal(syscall.SIGKILL, true)
				if r.sync != nil && sig == syscall.SIGINT {
					cancel() // a second Ctrl-C also gives up on uploads
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (r *run) halt() {
	r.mu.Lock()
	r.halted = true
	r.mu.Unlock()
}

func (r *run) isHalted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.halted
}

// baseEnv is runall's environment plus what identifies the run to its tasks.
func (r *run) baseEnv() []string {
	env := slices.Clone(r.opts.Environ)
	env = setEnv(env, "RUNALL_RUN_ID", r.id)
	env = setEnv(env, "RUNALL_LOG_DIR", r.logDir)
	if r.opts.Shard.active() {
		env = setEnv(env, "RUNALL_SHARD", r.opts.Shard.String())
	}
	return env
}

// setEnv sets NAME=value in env, replacing an earlier value.
func setEnv(env []string, name, value string) []string {
	prefix := name + "="
	for i, kv := range env {
		if strings.HasPrefix(kv, prefix) {
			env[i] = prefix + value
			return env
		}
	}
	return append(env, prefix+value)
}

func lookupEnv(env []string, name string) (string, bool) {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if strings.HasPrefix(env[i], prefix) {
			return env[i][len(prefix):], true
		}
	}
	return "", false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
