package checkpoint

import (
	"context"
	"errors"
)

// ErrConflict is a manifest write that lost: the manifest changed since it was read.
var ErrConflict = errors.New("the manifest changed since it was read")

// Store is where trials' checkpoints are kept: a local directory (Dir), or an S3 prefix
// (runner/checkpoint/s3store, which the run builds and hands in: this package knows no S3
// client).
type Store interface {
	// ReadManifest returns trial's manifest as stored and a tag for WriteManifest; nil
	// when the trial has none.
	ReadManifest(ctx context.Context, trial string) (body []byte, tag string, err error)
	// WriteManifest writes trial's manifest if it is still the one tagged tag ("": none
	// exists); an error wrapping ErrConflict if not.
	WriteManifest(ctx context.Context, trial string, body []byte, tag string) error
	// Put copies the local directory dir into trial's version.
	Put(ctx context.Context, dir, trial, version string) error
	// Get copies trial's version into the local directory dir, which it creates.
	Get(ctx context.Context, trial, version, dir string) error
	// Drop removes trial's version; version "" removes everything kept for trial.
	Drop(ctx context.Context, trial, version string) error
	// Where is the trial's folder, for messages.
	Where(trial string) string
}
