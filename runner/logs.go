package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/runall/runall/runner/plan"
)

// logs are the files a run writes tasks' output to: one per task under the run's log
// directory, config log-path (every task's output, as bashful), and tasks' own log-path.
type logs struct {
	dir      string
	resolve  func(path string) string // a task file's path, against the run's directory
	combined *lockedFile              // config log-path; nil when unset

	mu    sync.Mutex
	extra map[string]*lockedFile // a task's log-path, shared by tasks that name one file
}

func openLogs(dir, combinedPath string, resolve func(string) string) (*logs, error) {
	l := &logs{dir: dir, resolve: resolve, extra: map[string]*lockedFile{}}
	if combinedPath != "" {
		f, err := openAppend(resolve(combinedPath))
		if err != nil {
			return nil, fmt.Errorf("config log-path: %w", err)
		}
		l.combined = f
	}
	return l, nil
}

// taskLogPath is where a task's full output goes: <log dir>/<id>-<name>.log.
func (l *logs) taskLogPath(t *plan.Task) string {
	return filepath.Join(l.dir, fmt.Sprintf("%03d-%s.log", t.ID, plan.Slug(t.Name)))
}

// open opens everything a task's output goes to. A log-path that cannot be opened is
// reported through warn and left out; the task's own log is a must.
func (l *logs) open(t *plan.Task, warn func(string)) (*taskLog, error) {
	f, err := os.OpenFile(l.taskLogPath(t), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	tl := &taskLog{own: f, combined: l.combined}
	if t.LogPath != "" {
		path := l.resolve(t.LogPath)
		if tl.extra, err = l.extraLog(path); err != nil {
			warn(fmt.Sprintf("cannot open log-path %s: %v", path, err))
		}
	}
	return tl, nil
}

func (l *logs) extraLog(path string) (*lockedFile, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.extra[path]; ok {
		return f, nil
	}
	f, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	l.extra[path] = f
	return f, nil
}

func (l *logs) close() {
	if l.combined != nil {
		l.combined.Close()
	}
	for _, f := range l.extra {
		f.Close()
	}
}

// taskLog is where one task's output goes.
type taskLog struct {
	own      *os.File
	combined *lockedFile // nil when unset
	extra    *lockedFile // nil when unset
}

// line writes one line of output everywhere; mark writes runall's own note (an attempt's
// start and end) to the task's log alone.
func (tl *taskLog) line(s string) {
	tl.own.WriteString(s + "\n")
	if tl.combined != nil {
		tl.combined.WriteString(s + "\n")
	}
	if tl.extra != nil {
		tl.extra.WriteString(s + "\n")
	}
}

func (tl *taskLog) mark(format string, args ...any) { fmt.Fprintf(tl.own, "== "+format+"\n", args...) }

func (tl *taskLog) close() { tl.own.Close() }

// lockedFile is a log file written by several tasks at once, a line at a time.
type lockedFile struct {
	mu sync.Mutex
	f  *os.File
}

func openAppend(path string) (*lockedFile, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &lockedFile{f: f}, nil
}

func (l *lockedFile) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.WriteString(s)
}

func (l *lockedFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
