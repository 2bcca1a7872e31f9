package runner

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/results"
)

// Options configures a run. The zero value of each field is a sane default.
type Options struct {
	Stdout      io.Writer
	Stderr      io.Writer // where runall says what a stdout it could not write lost
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

func (o Options) withDefaults() Options {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
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

// runDir is the run's log directory, <LogDir>/<run-id>.
func (o Options) runDir() string { return filepath.Join(o.LogDir, o.RunID) }

// claiming reports whether the run takes its trials from claims.
func (o Options) claiming() bool { return o.Claims != "" || o.ClaimStore != nil }
