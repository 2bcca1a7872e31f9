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

	"github.com/runall/runall/internal/owned"
	"github.com/runall/runall/internal/pathname"
)

// ErrNoReader is a FIFO that no process reads: opening it to write would wait for one.
var ErrNoReader = errors.New("is a FIFO that no process reads: nothing to write to")

// WriteTimeout bounds a write through a FIFO whose reader stops reading.
const WriteTimeout = 30 * time.Second

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
// exist or is not a directory, before anything runs; the error says what to do. The
// directory is the one a write reaches as the kernel resolves the path: a link at it
// (dangling too) followed to where the file would be made, a ".." taken after a link.
func CheckDir(path string) error {
	where := pathname.Real(path)
	dir := filepath.Dir(where)
	leads := ""
	if abs, err := filepath.Abs(path); err != nil || abs != where {
		leads = " (it leads to " + where + ")"
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s%s: %w: %s: create it first, or name a file in a directory that exists", path, leads, ErrNoDir, dir)
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s%s: %s is not a directory: name a file in a directory that exists", path, leads, dir)
	}
	return nil
}

// ErrIsSource is a path to write that names a file the command reads: writing it would
// replace what it is made from.
var ErrIsSource = errors.New("is a file this command reads")

// CheckWrite is CheckDir, and refuses path when it reaches one of sources (the files the
// command reads, relative to the working directory), however either is named: compared by
// device and inode where the file exists, else by where their links lead (pathname.Same).
func CheckWrite(path string, sources ...string) error {
	if err := CheckDir(path); err != nil {
		return err
	}
	for _, src := range sources {
		if pathname.Same(path, src) {
			return fmt.Errorf("%s %w (%s): writing it would replace it; name another file", path, ErrIsSource, src)
		}
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
// renamed into place, inside path's directory (internal/owned: the temporary file is made,
// renamed and removed through an os.Root there, and the mode is 0644, not CreateTemp's 0600,
// which is for secrets: these are outputs).
func replace(path string, write func(io.Writer) error) error {
	dir, err := owned.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Replace(filepath.Base(path), 0o644, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
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

// dangling is where a missing path would be created: the end of its chain of symlinks, as
// the kernel follows it (a ".." in a link's target taken after the links before it), so that
// a symlink to a file not written yet stays a symlink.
func dangling(path string) (string, error) {
	target := pathname.Real(path)
	if fi, err := os.Lstat(target); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("%s: too many levels of symlinks", path) // Real stops at a loop's 40th hop
	}
	return target, nil
}
