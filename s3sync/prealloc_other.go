//go:build !linux

package s3sync

import "os"

// preallocate does nothing here: the file grows as ranges land.
func preallocate(*os.File, int64) {}
