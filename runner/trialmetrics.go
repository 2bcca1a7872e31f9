package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// A task's metrics come from its runall-metric lines (command.onLine feeds them to the
// command's metric.Set as they arrive) and from its metrics: file, read when it ends,
// whatever the outcome: a trial that failed or timed out after some epochs still shows them.

// maxMetricsFile bounds what is read of a metrics file: a history of a few thousand epochs
// is far smaller; a bigger file is a mistake (a checkpoint named by metrics:, say).
const maxMetricsFile = 16 << 20

// metricsReadTimeout bounds the read of a metrics file, so that a stalled filesystem
// cannot hold the trial's end (and the scheduler behind it) for ever.
const metricsReadTimeout = 10 * time.Second

// readMetrics reads the task's metrics file and says what its result records of its
// metrics; it reports what could not be read, in its log and the output.
func (c *command) readMetrics(dir string, env []string, ok bool) (last map[string]float64, series map[string][]float64, warnings []string) {
	t := c.t
	if t.Metrics != "" {
		c.readMetricsFile(dir, env, c.l.life.ledger.startedAt(t), ok)
	}
	last, series, warnings = c.metrics.Result()
	for i, w := range warnings {
		warnings[i] = c.l.mask.Replace(w)
		c.log.mark("metrics: %s", warnings[i])
		c.l.life.emit(event.Event{Kind: event.RunStatus, Task: t, Line: t.Name + ": " + warnings[i]})
	}
	return last, series, warnings
}

// readMetricsFile reads metrics: (${VAR}s expanded against the task's environment,
// relative to its directory). A file older than the task is an earlier run's: left out.
func (c *command) readMetricsFile(dir string, env []string, started time.Time, ok bool) {
	path, err := expandStrict(c.t.Metrics, env)
	if err != nil {
		c.metrics.Warn("metrics %s: %v: not read", c.t.Metrics, err)
		return
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ok {
			c.metrics.Warn("metrics file %s: not found: the command should write it (metrics: is relative to the task's cwd)", path)
		}
		return
	case err != nil:
		c.metrics.Warn("metrics file %s: %v", path, err)
		return
	case fi.IsDir():
		c.metrics.Warn("metrics file %s: is a directory: name the JSON file the command writes", path)
		return
	case !fi.Mode().IsRegular():
		c.metrics.Warn("metrics file %s: %v", path, metric.ErrNotRegular)
		return
	case !started.IsZero() && fi.ModTime().Before(started.Add(-time.Second)):
		// A second's slack: some filesystems keep coarse times.
		c.metrics.Warn("metrics file %s: last written %s, before this task started (an earlier run's?): left out",
			path, fi.ModTime().Format(time.RFC3339))
		return
	}
	data, err := metric.ReadFile(path, maxMetricsFile, metricsReadTimeout)
	if err != nil {
		c.metrics.Warn("metrics file %s: %v", path, err)
		return
	}
	c.metrics.File(path, data)
}

// paramsOf is a task's for-each or matrix values as its result records them.
func paramsOf(t *plan.Task) map[string]string {
	if len(t.Params) == 0 {
		return nil
	}
	m := make(map[string]string, len(t.Params))
	for _, p := range t.Params {
		m[p.Name] = p.Value
	}
	return m
}

// stopWhen carries config stop-when through a run: once a finished trial's metrics meet
// the condition, the trials not yet started are skipped.
type stopWhen struct {
	cond    *plan.Condition
	members map[*plan.Task]bool // the trials and their steps: whose metrics count

	mu     sync.Mutex
	reason string // why trials are skipped; "" until the condition is met
}

func newStopWhen(p *plan.Plan) *stopWhen {
	s := &stopWhen{cond: p.Config.StopWhen, members: map[*plan.Task]bool{}}
	for _, c := range p.Trials() {
		s.members[c] = true
		for _, step := range c.Steps {
			s.members[step] = true
		}
	}
	return s
}

// Event is stop-when's consumer: a trial's command that ends ok with metrics that meet
// the condition stops new trials from starting.
func (s *stopWhen) Event(ev event.Event, emit func(event.Event)) {
	if s.cond == nil || ev.Kind != event.TaskEnded || !ev.Final || ev.Status != results.StatusOK || !s.members[ev.Task] {
		return
	}
	v, has := ev.Metrics[s.cond.Metric]
	if !has || !s.cond.Met(v) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason != "" {
		return
	}
	s.reason = fmt.Sprintf("stop-when %q was met by %q (%s=%s)", s.cond.Text, ev.Task.Name, s.cond.Metric, strconv.FormatFloat(v, 'g', -1, 64))
	emit(event.Event{Kind: event.RunStatus, Line: s.reason + ": trials not started yet are skipped, running ones finish"})
}

// gate is where a trial about to start asks whether it should be skipped instead; it says
// why.
func (s *stopWhen) gate() (reason string, skip bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason == "" {
		return "", false
	}
	return "not started: " + s.reason, true
}

// stoppedReason is why stop-when skipped trials, "" when it did not.
func (s *stopWhen) stoppedReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// objectiveOf is config objective as the results record it.
func objectiveOf(p *plan.Plan) *results.Objective {
	if o := p.Config.Objective; o != nil {
		return &results.Objective{Metric: o.Metric, Mode: o.Mode}
	}
	return nil
}
