package checkpoint_test

import (
	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/checkpoint/s3store"
	"github.com/runall/runall/s3sync"
)

// The store tests run against the S3 store too, which this package's own tests cannot
// import: it imports the package.
func init() {
	checkpoint.NewS3 = func(c *s3sync.Client, prefix, stateDir string) (checkpoint.Store, error) {
		return s3store.New(c, prefix, stateDir)
	}
}
