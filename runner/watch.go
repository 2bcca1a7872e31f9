package runner

import (
	"net/http"
	"os"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

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
	// Metrics serves the run's Prometheus series.
	Metrics http.Handler
	// OpenLog opens a task's log (a LogFile of Results) to read it, only while it is the
	// file runall opened there: a symlink or another file put in its place is an error.
	OpenLog func(path string) (*os.File, error)
}

// serve starts the run's server (Options.Server) and says where it listens.
func (r *runDriver) serve(start time.Time) error {
	v := View{
		Results: func() *results.Run { return r.snapshot(start) },
		Metrics: r.met.Handler(),
		OpenLog: r.launch.logs.OpenServed,
	}
	addr, err := r.opts.Server.Serve(v)
	if err != nil {
		return err
	}
	r.life.say("serving the live report on http://" + addr + "/ (Prometheus metrics on http://" + addr + "/metrics)")
	return nil
}

// snapshot is the run's results as they stand: the results of its end, gathered now, with
// status running and no finish time, and the tasks not yet told of pending.
func (r *runDriver) snapshot(start time.Time) *results.Run {
	res := r.gather(start, results.StatusPending)
	res.Status, res.FinishedAt = results.StatusRunning, time.Time{}
	return res
}
