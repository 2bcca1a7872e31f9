package metric

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// ErrNotRegular is a metrics path that names something other than a regular file (a FIFO,
// a device such as /dev/stdout, a socket): reading it may never end, so it is not read.
var ErrNotRegular = errors.New("is not a regular file: name the JSON file the command writes")

// ErrTooLarge is a metrics file over the size bound.
var ErrTooLarge = errors.New("not a metrics file?")

// ReadFile reads a metrics file: a regular file, at most limit bytes, within timeout. It
// opens without blocking and checks what it opened, so that a FIFO put in the file's place
// cannot hang the caller; a read still under way at the timeout is abandoned.
func ReadFile(path string, limit int64, timeout time.Duration) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotRegular
	}
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(f, limit+1))
		f.Close()
		done <- read{data, err}
	}()
	select {
	case r := <-done:
		if r.err == nil && int64(len(r.data)) > limit {
			return nil, fmt.Errorf("larger than %d MiB: %w", limit>>20, ErrTooLarge)
		}
		return r.data, r.err
	case <-time.After(timeout):
		return nil, fmt.Errorf("not read within %v (a stalled filesystem?): left out", timeout)
	}
}
