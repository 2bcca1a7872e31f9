package s3sync

import (
	"errors"
	"fmt"
	"strings"

	"github.com/runall/runall/internal/pathname"
)

// ErrDeleteGuard is a sync with Delete that would delete what nobody meant to: a whole
// bucket, a filesystem's root, or a place an unset variable made (s3://b/$RUN_ID/ with
// RUN_ID unset is s3://b//). Every sync passes the guard, whoever asks for it: a task file's
// upload (whose whole-bucket: true is Options.WholeBucket) and runall sync alike (a task may
// call the CLI itself, with variables of its own).
var ErrDeleteGuard = errors.New("refusing to delete")

// checkDelete refuses a sync with Delete to dst where ErrDeleteGuard says; the source side is
// checked too, since a dry run walks it. Nothing is listed or walked before it.
func checkDelete(src, dst string, opts Options) error {
	if !opts.Delete {
		return nil
	}
	for _, side := range []string{src, dst} {
		if !isS3URL(side) {
			continue
		}
		rest := strings.TrimPrefix(side, "s3://")
		if strings.Contains(rest, "//") {
			return fmt.Errorf("%w: %s has an empty path segment, as an unset variable leaves (s3://bucket/$RUN_ID/ with RUN_ID unset): set it", ErrDeleteGuard, side)
		}
	}
	if isS3URL(dst) {
		if loc, err := parseS3URL(dst); err == nil && strings.Trim(loc.key, "/") == "" && !opts.WholeBucket {
			return fmt.Errorf("%w: --delete to %s would delete every object of the bucket not in %s: sync under a prefix (s3://%s/runs/42/), or say --whole-bucket", ErrDeleteGuard, dst, src, loc.bucket)
		}
		return nil
	}
	if pathname.Real(dst) == "/" { // a link to /, or a .. after a link, as the kernel takes it
		return fmt.Errorf("%w: --delete into %s would delete every file of the filesystem not in %s: name a directory of its own", ErrDeleteGuard, dst, src)
	}
	return nil
}
