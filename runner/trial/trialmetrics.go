package trial

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
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
		c.metrics.readFile(t, dir, env, startedAt(c.run.life, t), ok)
	}
	last, series, warnings = c.metrics.set.Result()
	for i, w := range warnings {
		warnings[i] = c.mask.Replace(w)
		c.log.Mark("metrics: %s", warnings[i])
		c.run.emit(event.Event{Kind: event.RunStatus, Task: t, Line: t.Name + ": " + warnings[i]})
	}
	return last, series, warnings
}

// readFile reads t's metrics: (${VAR}s expanded against the task's environment, relative
// to its directory). A file older than the task is an earlier run's: left out.
func (m *trialMetrics) readFile(t *plan.Task, dir string, env []string, started time.Time, ok bool) {
	path, err := plan.ExpandStrictEnv(t.Metrics, env)
	if err != nil {
		m.set.Warn("metrics %s: %v: not read", t.Metrics, err)
		return
	}
	path = plan.TaskPath(dir, path) // a ".." after a link as the kernel takes it, where the command wrote
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ok {
			m.set.Warn("metrics file %s: not found: the command should write it (metrics: is relative to the task's cwd)", path)
		}
		return
	case err != nil:
		m.set.Warn("metrics file %s: %v", path, err)
		return
	case fi.IsDir():
		m.set.Warn("metrics file %s: is a directory: name the JSON file the command writes", path)
		return
	case !fi.Mode().IsRegular():
		m.set.Warn("metrics file %s: %v", path, metric.ErrNotRegular)
		return
	case !started.IsZero() && fi.ModTime().Before(started.Add(-time.Second)):
		// A second's slack: some filesystems keep coarse times.
		m.set.Warn("metrics file %s: last written %s, before this task started (an earlier run's?): left out",
			path, fi.ModTime().Format(time.RFC3339))
		return
	}
	data, err := metric.ReadFile(path, maxMetricsFile, metricsReadTimeout)
	if err != nil {
		m.set.Warn("metrics file %s: %v", path, err)
		return
	}
	m.set.File(path, data)
}
