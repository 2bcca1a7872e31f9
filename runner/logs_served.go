package runner

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

// noted records the file runall opened at path for a task's log, so that openServed can
// tell it from a file put there since.
func (l *logs) noted(path string, f *os.File) {
	fi, err := f.Stat()
	if err != nil {
		return // not served: openServed finds nothing noted
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opened[path] = fi
}

// openServed opens the log runall wrote at path to read it: without following a symlink,
// without waiting on a FIFO, and only when it is the very file runall opened there.
func (l *logs) openServed(path string) (*os.File, error) {
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
	if err == nil && !os.SameFile(want, got) {
		err = errors.New("another file was put in its place")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is no longer the log runall wrote: %w", path, err)
	}
	return f, nil
}
