package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

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

// taskLogPath is where a task's full output goes: <log dir>/<id>-<name>.log.
func (r *run) taskLogPath(t *Task) string {
	return filepath.Join(r.logDir, fmt.Sprintf("%03d-%s.log", t.ID, slug(t.Name)))
}

func (r *run) openTaskLog(t *Task) (*os.File, error) {
	return os.OpenFile(r.taskLogPath(t), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// extraLog is a task's own log-path:, shared by tasks that name the same file.
func (r *run) extraLog(path string) *lockedFile {
	if path == "" {
		return nil
	}
	path = r.taskPath(path)
	r.extraLogMu.Lock()
	defer r.extraLogMu.Unlock()
	if f, ok := r.extraLogs[path]; ok {
		return f
	}
	f, err := openAppend(path)
	if err != nil {
		r.emit(Event{Kind: RunStatus, Line: fmt.Sprintf("cannot open log-path %s: %v", path, err)})
		return nil
	}
	r.extraLogs[path] = f
	return f
}

// slug makes a task name safe and short for a file name.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
		if ok {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "task"
	}
	return s
}

// writeResults writes --results atomically: a reader never sees half a file.
func writeResults(path string, res *Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
