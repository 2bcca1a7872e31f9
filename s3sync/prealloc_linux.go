package s3sync

import (
	"os"
	"syscall"
)

// preallocate reserves size bytes for f, a new download, so that parallel ranges written
// at their offsets do not make the file system allocate and split extents as they land.
// A file system that cannot do it just allocates as the bytes come.
func preallocate(f *os.File, size int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Fallocate(int(fd), 0, 0, size)
	})
}
