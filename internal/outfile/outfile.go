// Package outfile writes the files runall is pointed at (--results, report -o, the log
// directory's records, log files, log-path:) where the user pointed, and never waits to
// open one. A symlink is followed and stays a symlink; a regular file or a missing path is
// replaced whole (a temporary file renamed into place, so that a reader sees the old file or
// the whole new one); a FIFO, a device or a socket is written through, never replaced by a
// file (--results /dev/stdout in a root container would have replaced the device for every
// later process); a directory is an error.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrNoReader is a FIFO that no process reads: opening it to write would wait for one.
var ErrNoReader = errors.New("is a FIFO that no process reads: nothing to write to")

// WriteTimeout bounds a write through a FIFO whose reader stops reading.
const WriteTimeout = 30 * time.Second

// OpenAppend opens path to append to, creating it (and its directory) when missing, without
// waiting: a FIFO with no reader is ErrNoReader.
func OpenAppend(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%s %w", path, ErrNoReader)
	}
	return f, err
}

// Write writes the file at path with what write writes, buffered, where path points (see the
// package's comment).
func Write(path string, write func(io.Writer) error) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode().IsRegular():
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		return replace(target, write)
	case err == nil && fi.IsDir():
		return fmt.Errorf("%s is a directory: name a file", path)
	case err == nil:
		return through(path, write)
	case errors.Is(err, fs.ErrNotExist):
		target, err := dangling(path)
		if err != nil {
			return err
		}
		return replace(target, write)
	}
	return err
}

// ErrNoDir is a path whose directory does not exist: runall does not create a directory
// the user named (as root, a typo would create it anywhere).
var ErrNoDir = errors.New("directory does not exist")

// CheckDir refuses a path the user named (--results, report -o) whose directory does not
// exist or is not a directory, before anything runs; the error says what to do.
func CheckDir(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w: %s: create it first, or name a file in a directory that exists", path, ErrNoDir, dir)
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory: name a file in a directory that exists", path, dir)
	}
	return nil
}

// WriteFile is Write with data.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// replace writes path (a regular file or a missing one) through a temporary file beside it,
// renamed into place.
func replace(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp's 0600 is for secrets; these are outputs
		tmp.Close()
		return err
	}
	if err := buffered(tmp, write); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// through writes into what path is (a FIFO, a device), opened without waiting, each write
// within WriteTimeout where the file takes a deadline (a FIFO does).
func through(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return fmt.Errorf("%s %w", path, ErrNoReader)
	}
	if err != nil {
		return err
	}
	_ = f.SetWriteDeadline(time.Now().Add(WriteTimeout)) // a device without a poller has none
	if err := buffered(f, write); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func buffered(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// dangling is where a missing path would be created: the end of its chain of symlinks, so
// that a symlink to a file not written yet stays a symlink.
func dangling(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, err
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", fmt.Errorf("%s: too many levels of symlinks", path)
}
