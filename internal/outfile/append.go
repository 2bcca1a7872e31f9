package outfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// This file is the one place of outfile that make check (internal/limits/fence.go) lets open
// a path to append to outside an os.Root: a log file goes where log-path: or --log-dir
// points, a symlink there followed by design, as a shell's >> would.

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
