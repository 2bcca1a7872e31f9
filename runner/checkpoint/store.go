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
	under, err := s.under(trial, "")
	if err != nil {
		return nil, "", err
	}
	b, etag, err := s.c.Get(ctx, under+manifestName, 16<<20)
	if errors.Is(err, s3sync.ErrNotExist) {
		return nil, "", nil
	}
	return b, etag, err
}

func (s *S3) WriteManifest(ctx context.Context, trial string, body []byte, tag string) error {
	under, err := s.under(trial, "")
	if err != nil {
		return err
	}
	_, err = s.c.PutIf(ctx, under+manifestName, body, s3sync.Condition{IfNoneMatch: tag == "", IfMatch: tag})
	if errors.Is(err, s3sync.ErrPrecondition) {
		return fmt.Errorf("%s: %w: %w", under+manifestName, ErrConflict, err)
	}
	return err
}

// under is the folder of trial's version (of everything kept for trial when version is
// ""), refusing names that are not plain: an S3 key holds ".." as it is, and another
// trial's folder is one "../" away.
func (s *S3) under(trial, version string) (string, error) {
	if err := checkName("trial", trial); err != nil {
		return "", fmt.Errorf("checkpoint store %s: %w", s.prefix, err)
	}
	if version == "" {
		return s.Where(trial), nil
	}
	if err := checkName("version", version); err != nil {
		return "", fmt.Errorf("%s: %w", s.Where(trial), err)
	}
	return s.Where(trial) + version + "/", nil
}

func (s *S3) Put(ctx context.Context, dir, trial, version string) error {
	if err := checkName("version", version); err != nil {
		return fmt.Errorf("%s: %w", s.Where(trial), err)
	}
	to, err := s.under(trial, version)
	if err != nil {
		return err
	}
	_, err = s.c.Sync(ctx, dir, to, s3sync.Options{StateDir: s.stateDir, SkipLinks: true})
	return err
}

func (s *S3) Get(ctx context.Context, trial, version, dir string) error {
	if err := checkName("version", version); err != nil {
		return fmt.Errorf("%s: %w", s.Where(trial), err)
	}
	from, err := s.under(trial, version)
	if err != nil {
		return err
	}
	_, err = s.c.Sync(ctx, from, dir, s3sync.Options{StateDir: s.stateDir})
	return err
}

func (s *S3) Drop(ctx context.Context, trial, version string) error {
	under, err := s.under(trial, version)
	if err != nil {
		return err
	}
	var urls []string
	err = s.c.List(ctx, under, func(o s3sync.Listed) error {
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
