package trial

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// The live server serves a trial's log by the file runall opened for it, never by its path
// alone: a symlink or another file put at the path since (by the trial, or anyone who can
// write the log directory) would serve whatever it names, any file runall can read, to
// whoever reaches the port.

// errNotServed is a path that is not a log this run opened.
var errNotServed = errors.New("not a log this run wrote")

// servedLog is a task's log as runall last saw it through its descriptor. While runall
// holds it open its inode cannot be another file's; once closed, a file put in its place
// may get the same inode number, so its change time must match too (nobody can set it).
type servedLog struct {
	fi     os.FileInfo
	closed bool
}

// noted records the file runall opened at path for a task's log (closed: as it is being
// closed, all written), so that OpenServed can tell it from a file put there since.
func (l *Logs) noted(path string, f *os.File, closed bool) {
	fi, err := f.Stat()
	if err != nil {
		return // not served: OpenServed finds nothing noted, or the older look
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opened[path] = servedLog{fi: fi, closed: closed}
}

// OpenServed opens the log runall wrote at path to read it: without following a symlink,
// without waiting on a FIFO, and only when it is the very file runall opened there.
func (l *Logs) OpenServed(path string) (*os.File, error) {
	l.mu.Lock()
	want, ok := l.opened[path]
	l.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, errNotServed)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s is no longer the log runall wrote: %w", path, err)
	}
	got, err := f.Stat()
	if err == nil && !want.same(got) {
		err = errors.New("another file was put in its place")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is no longer the log runall wrote: %w", path, err)
	}
	return f, nil
}

// same reports whether got is the log: the same file, and for a closed one, unchanged since.
func (s servedLog) same(got os.FileInfo) bool {
	if !os.SameFile(s.fi, got) {
		return false
	}
	if !s.closed {
		return true
	}
	a, aok := s.fi.Sys().(*syscall.Stat_t)
	b, bok := got.Sys().(*syscall.Stat_t)
	return aok && bok && a.Ctim == b.Ctim && s.fi.Size() == got.Size()
}
