package trial

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/plan"
)

// Logs are the files a run writes tasks' output to: one per task under the run's log
// directory, config log-path (every task's output, as bashful), and tasks' own log-path.
type Logs struct {
	dir string
	// resolve is a log-path of t (nil: config's), its ${VAR}s expanded, against the run's directory.
	resolve  func(t *plan.Task, path string) (string, error)
	combined *batchFile // config log-path; nil when unset
	failed   *writeFailures

	mu     sync.Mutex
	extra  map[string]*batchFile // a task's log-path, shared by tasks that name one file
	opened map[string]servedLog  // each task's own log as runall opened it (logs_served.go)
}

// OpenLogs opens the run's logs under dir, and config log-path (combinedPath; "": none);
// resolve is a log-path of t (nil: config's), its ${VAR}s expanded, against the run's
// directory.
func OpenLogs(dir, combinedPath string, resolve func(*plan.Task, string) (string, error)) (*Logs, error) {
	l := &Logs{dir: dir, resolve: resolve, extra: map[string]*batchFile{}, failed: &writeFailures{},
		opened: map[string]servedLog{}}
	if combinedPath != "" {
		path, err := resolve(nil, combinedPath)
		var f *batchFile
		if err == nil {
			f, err = openAppend(path, l.failed)
		}
		if err != nil {
			return nil, fmt.Errorf("config log-path: %w", err)
		}
		l.combined = f
	}
	return l, nil
}

// TaskLogPath is where a task's full output goes: <log dir>/<id>-<name>.log.
func (l *Logs) TaskLogPath(t *plan.Task) string {
	return filepath.Join(l.dir, fmt.Sprintf("%03d-%s.log", t.ID, plan.Slug(t.Name)))
}

// open opens everything a task's output goes to. A log-path that cannot be opened is
// reported through warn and left out, and the run's record is incomplete (exit 1, as for a
// log that cannot be written); the task's own log is a must.
func (l *Logs) open(t *plan.Task, warn func(string)) (*taskLog, error) {
	path := l.TaskLogPath(t)
	f, err := outfile.OpenAppend(path)
	if err != nil {
		return nil, err
	}
	l.noted(path, f, false)
	tl := &taskLog{own: newBatchFile(f, l.failed), combined: l.combined, warn: warn}
	tl.own.closing = func(f *os.File) { l.noted(path, f, true) }
	if t.LogPath != "" {
		extra, err := l.resolve(t, t.LogPath) // not path: the closing above notes the task's own log by it
		if err == nil {
			tl.extra, err = l.extraLog(extra)
		}
		if err != nil {
			extra = cmp.Or(extra, t.LogPath)
			warn(fmt.Sprintf("cannot open log-path %s: %v: the task runs without it", extra, err))
			l.failed.note(extra, err, nil)
		}
	}
	return tl, nil
}

func (l *Logs) extraLog(path string) (*batchFile, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.extra[path]; ok {
		return f, nil
	}
	f, err := openAppend(path, l.failed)
	if err != nil {
		return nil, err
	}
	l.extra[path] = f
	return f, nil
}

// Close closes the logs that tasks share.
func (l *Logs) Close() {
	if l.combined != nil {
		l.combined.close(nil)
	}
	for _, f := range l.extra {
		f.close(nil)
	}
}

// taskLog is where one task's output goes.
type taskLog struct {
	own      *batchFile
	combined *batchFile   // nil when unset
	extra    *batchFile   // nil when unset
	warn     func(string) // says that a log could not be written, once per file

	mu    sync.Mutex // drawn: runall's marks may come from another goroutine than the lines
	drawn string     // the bar's state the own log drew last, "" after a line
}

// Line writes one line of output everywhere; Mark writes runall's own note (an attempt's
// start and end) to the task's log alone. An update of a bar drawn in place (a piece ending
// in \r) goes to the task's own log alone, as the script drew it, with no newline: the log
// holds each bar on one line, redrawn, as a terminal shows it. The logs that tasks share
// (log-path) get the bar's last state, the line that ends it.
func (tl *taskLog) Line(s string) {
	tl.mu.Lock()
	switch {
	case strings.HasSuffix(s, "\r"):
		tl.own.write(s, tl.warn)
		tl.drawn = s[:len(s)-1]
		tl.mu.Unlock()
		return
	case tl.drawn != "" && s == tl.drawn:
		tl.own.write("\n", tl.warn) // the state just drawn ends its line (proc's readLines)
	default:
		tl.own.write(s+"\n", tl.warn)
	}
	tl.drawn = ""
	tl.mu.Unlock()
	if tl.combined != nil {
		tl.combined.write(s+"\n", tl.warn)
	}
	if tl.extra != nil {
		tl.extra.write(s+"\n", tl.warn)
	}
}

func (tl *taskLog) Mark(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.drawn != "" { // a bar is drawn on the line: the mark goes on a line of its own
		tl.own.write("\n", tl.warn)
		tl.drawn = ""
	}
	tl.own.write(fmt.Sprintf("== "+format+"\n", args...), tl.warn)
}

// Close closes the task's own log and has what it wrote to the shared ones written out: the
// task has ended, and its lines belong in them now.
func (tl *taskLog) Close() {
	tl.own.close(tl.warn)
	for _, f := range []*batchFile{tl.combined, tl.extra} {
		if f != nil {
			f.flush(tl.warn)
		}
	}
}

// writeFailures are the log files that could not be written (a full disk): each is
// reported once, when it first fails, and the run's end says its record is incomplete.
// The tasks go on: their outcome does not depend on their logs.
type writeFailures struct {
	mu    sync.Mutex
	files []string // "path: error", in the order they failed
	seen  map[string]bool
}

func (w *writeFailures) note(path string, err error, warn func(string)) {
	w.mu.Lock()
	if w.seen[path] {
		w.mu.Unlock()
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[path] = true
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // its text would repeat the path
	}
	msg := fmt.Sprintf("%s: %v", path, err)
	w.files = append(w.files, msg)
	w.mu.Unlock()
	if warn != nil {
		warn("could not write the log " + msg + ": it is incomplete from here")
	}
}

// Failed is what could not be written, "path: error" each.
func (l *Logs) Failed() []string { return l.failed.list() }

// list is what failed, "path: error" each.
func (w *writeFailures) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.files)
}

// ErrIncompleteRecord is a run whose record (its tasks' logs, its results, its report) could
// not all be written: its exit code is 1 even when every task succeeded, since what it
// leaves is not the whole record.
var ErrIncompleteRecord = errors.New("the run's record is incomplete")

// Incomplete is an error naming the logs that could not be written, nil when none.
func (l *Logs) Incomplete() error {
	files := l.failed.list()
	if len(files) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d log file(s) could not be written (%s)", ErrIncompleteRecord, len(files), strings.Join(files, "; "))
}
