package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/claimsource"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/shard"
)

// Options configures a run. The zero value of each field is a sane default.
type Options struct {
	Output OutputOptions // how the run is shown
	Record RecordOptions // where it leaves its logs, results and report

	Environ []string      // runall's own environment, the base of every task's
	Grace   time.Duration // between SIGTERM and SIGKILL when stopping (default 20s)

	// Signals delivers SIGINT/SIGTERM/SIGHUP. The first stops the run gracefully (and its
	// downloads at once), a second kills at once and ends the final uploads.
	Signals <-chan os.Signal

	Resources ResourceOptions // the GPUs and the container's memory trials are admitted by

	Shard  shard.Shard   // run only this shard's share of the trials
	Fresh  bool          // ignore resume markers from earlier runs
	Claims ClaimsOptions // a sweep shared with other runalls (--claims)

	// Server shows the run while it goes: the live report, its state as JSON, Prometheus
	// metrics (the CLI's --serve passes one); nil: none.
	Server Server

	// Consumers are told every event of the run, after runall's own consumers (the
	// results, Prometheus, stop-when) and before the output.
	Consumers []event.Consumer

	Stop StopOptions // how its processes are stopped beyond Grace and Signals
}

// StopOptions say how a run stops its processes.
type StopOptions struct {
	// ReapOrphans makes runall adopt the processes tasks leave behind and stop them at the
	// end. The CLI sets it; tests running many runs in one process do not.
	ReapOrphans bool
	// CheckpointFirst: on the first signal, each running trial with checkpoint: is given up
	// to Grace to keep its next copy before it is stopped (--grace-checkpoint).
	CheckpointFirst bool
}

// OutputOptions say how a run is shown.
type OutputOptions struct {
	Stdout      io.Writer
	Stderr      io.Writer // where runall says what a stdout it could not write lost
	Mode        output.Mode
	Color       bool
	Width       func() int
	StatusEvery time.Duration // plain output's status line (default 30s)
}

// RecordOptions say where a run leaves its record.
type RecordOptions struct {
	LogDir      string // default ./.runall/logs; each run writes <LogDir>/<run-id>/
	RunID       string // default: a timestamp and a random suffix
	ResultsFile string // --results: a JSON summary of the run
	// Report draws the run's HTML report into its log directory (the CLI passes
	// report.WriteRun); nil: no report. The runner does not know how a report looks.
	Report func(w io.Writer, res *results.Run, samples *results.GPUSamples) error
}

// ResourceOptions are what trials are admitted by.
type ResourceOptions struct {
	Probe    gpu.Probe // nil when there is no GPU; ProbeErr says why
	ProbeErr error
	NoGPU    bool // run GPU tasks with max-parallel-commands as the only limit
	// HostMemory measures the container's memory for memory: (nil: its memory cgroup, found
	// from /proc).
	HostMemory hostadmit.Reader
}

// ClaimsOptions share a sweep's trials with other runalls through one queue (runner/claimsource).
type ClaimsOptions struct {
	// Prefix is an s3:// prefix through which runalls with the same task file share one
	// queue of its trials; "" = every trial runs here.
	Prefix string
	Lease  time.Duration // how long a claim holds without renewal (default claimsource.DefaultLease)
	Store  claims.Store  // the queue's store instead of Prefix's S3 (tests)
}

func (o Options) withDefaults() Options {
	if o.Output.Stdout == nil {
		o.Output.Stdout = io.Discard
	}
	if o.Output.Stderr == nil {
		o.Output.Stderr = io.Discard
	}
	if o.Output.Mode == "" {
		o.Output.Mode = output.Plain
	}
	if o.Output.StatusEvery <= 0 {
		o.Output.StatusEvery = 30 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 20 * time.Second
	}
	if o.Record.LogDir == "" {
		o.Record.LogDir = filepath.Join(".runall", "logs")
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Record.RunID == "" {
		o.Record.RunID = newRunID(time.Now())
	}
	return o
}

func newRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return now.Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// runDir is the run's log directory, <LogDir>/<run-id>.
func (o Options) runDir() string { return filepath.Join(o.Record.LogDir, o.Record.RunID) }

// claiming reports whether the run takes its trials from claims.
func (o Options) claiming() bool { return o.Claims.Prefix != "" || o.Claims.Store != nil }

// CheckPlan says what in p these options cannot run, before anything runs. Search refuses
// to be shared: the claims queue and the shards split a list of trials known before the
// run, and a sampler's trials are made as it is asked; each runall would ask for all
// trials: N, and a killed runall's trials would be neither taken over nor told.
func (o Options) CheckPlan(p *plan.Plan) error {
	how := "--claims"
	switch {
	case o.Shard.Count > 1:
		how = "--shard"
	case !o.claiming():
		return nil
	}
	for _, b := range p.Tasks {
		for _, t := range b.Parallel {
			if t.Search != nil {
				return fmt.Errorf("%s: search: runs in one runall, not with %s: its trials are asked for as the run goes, so no queue or shard can split them. To share one study among several runalls, run each without %s, with trials: its share, and point ask and tell at the study's shared storage", t.Pos, how, how)
			}
		}
	}
	return nil
}

// Server shows the run while it goes (--serve: the live report, /api/run, /metrics). It is
// a consumer of the run's events, added like the others, and the run starts it before its
// first task with a View of itself. The runner does not know how a report looks: the CLI
// passes a server that draws it. Stopping it is its maker's: it may stay up after the run.
type Server interface {
	event.Consumer
	// Serve starts serving v and returns the address it listens on. An error (an address in
	// use) skips every task, as a download that cannot start does.
	Serve(v View) (addr string, err error)
}

// Watcher is a consumer of Options.Consumers that also reads the run's results while it
// goes (the Pod's progress annotations): the run hands it a View (Results only) before its
// first task, and calls the func it returns as the tasks are done.
type Watcher interface {
	WatchRun(v View) (stop func())
}

// View is what a server may read of the run, from any goroutine, while the run goes on.
type View struct {
	// Results are the run's results so far, gathered by the code that gathers results.json
	// at the end, with the running and waiting trials as they are now: status running (no
	// finished_at), each trial's metrics and GPU peak so far, a waiting trial's reason.
	Results func() *results.Run
	// Sweep is a claims sweep's figures (claimsource.Figures: every runall's trials, the
	// queue listed again when its last listing is older than fresh); false without claims,
	// or before the run joined them. Nil in the server's View.
	Sweep func(ctx context.Context, fresh time.Duration) (claimsource.Figures, bool)
	// Metrics serves the run's Prometheus series.
	Metrics http.Handler
	// OpenLog opens a task's log (a LogFile of Results) to read it, only while it is the
	// file runall opened there: a symlink or another file put in its place is an error.
	OpenLog func(path string) (*os.File, error)
}
