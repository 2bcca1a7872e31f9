package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runall/runall/s3sync"
)

// ErrConflict is a manifest write that lost: the manifest changed since it was read.
var ErrConflict = errors.New("the manifest changed since it was read")

// Store is where trials' checkpoints are kept: an S3 prefix, or a local directory.
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

// S3 is a Store under an s3://bucket/prefix/.
type S3 struct {
	c        *s3sync.Client
	prefix   string
	stateDir string // the sync records of the copies (s3sync.Options.StateDir)
}

// NewS3 keeps checkpoints under prefix, an s3:// URL, through c; stateDir is where the
// copies' sync records go ("" for s3sync's default).
func NewS3(c *s3sync.Client, prefix, stateDir string) (*S3, error) {
	if !strings.HasPrefix(prefix, "s3://") || len(prefix) <= len("s3://") {
		return nil, fmt.Errorf("checkpoints %q: want an s3://BUCKET/PREFIX/ URL", prefix)
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &S3{c: c, prefix: prefix, stateDir: stateDir}, nil
}

// Where is the trial's folder.
func (s *S3) Where(trial string) string { return s.prefix + trial + "/" }

func (s *S3) ReadManifest(ctx context.Context, trial string) ([]byte, string, error) {
	b, etag, err := s.c.Get(ctx, s.Where(trial)+manifestName, 16<<20)
	if errors.Is(err, s3sync.ErrNotExist) {
		return nil, "", nil
	}
	return b, etag, err
}

func (s *S3) WriteManifest(ctx context.Context, trial string, body []byte, tag string) error {
	_, err := s.c.PutIf(ctx, s.Where(trial)+manifestName, body, s3sync.Condition{IfNoneMatch: tag == "", IfMatch: tag})
	if errors.Is(err, s3sync.ErrPrecondition) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

func (s *S3) Put(ctx context.Context, dir, trial, version string) error {
	_, err := s.c.Sync(ctx, dir, s.Where(trial)+version+"/", s3sync.Options{StateDir: s.stateDir})
	return err
}

func (s *S3) Get(ctx context.Context, trial, version, dir string) error {
	_, err := s.c.Sync(ctx, s.Where(trial)+version+"/", dir, s3sync.Options{StateDir: s.stateDir})
	return err
}

func (s *S3) Drop(ctx context.Context, trial, version string) error {
	under := s.Where(trial)
	if version != "" {
		under += version + "/"
	}
	var urls []string
	err := s.c.List(ctx, under, func(o s3sync.Listed) error {
		urls = append(urls, o.URL)
		return nil
	})
	if err != nil {
		return err
	}
	for _, u := range urls {
		if err := s.c.Delete(ctx, u); err != nil {
			return err
		}
	}
	return nil
}
