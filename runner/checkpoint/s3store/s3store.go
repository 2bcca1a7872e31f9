// Package s3store keeps trials' checkpoints under an S3 prefix: a checkpoint.Store that the
// run builds with its S3 client and hands to runner/checkpoint, so that the checkpoint
// package, and the trial that keeps its copies through it, import no S3 client.
package s3store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runall/runall/internal/pathname"
	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/s3sync"
)

// Store is a checkpoint.Store under an s3://bucket/prefix/.
type Store struct {
	c        *s3sync.Client
	prefix   string
	stateDir string // the sync records of the copies (s3sync.Options.StateDir)
}

// New keeps checkpoints under prefix, an s3:// URL, through c; stateDir is where the
// copies' sync records go ("" for s3sync's default).
func New(c *s3sync.Client, prefix, stateDir string) (*Store, error) {
	if !strings.HasPrefix(prefix, "s3://") || len(prefix) <= len("s3://") {
		return nil, fmt.Errorf("checkpoints %q: want an s3://BUCKET/PREFIX/ URL", prefix)
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &Store{c: c, prefix: prefix, stateDir: stateDir}, nil
}

// Where is the trial's folder.
func (s *Store) Where(trial string) string { return s.prefix + trial + "/" }

func (s *Store) ReadManifest(ctx context.Context, trial string) ([]byte, string, error) {
	under, err := s.under(trial, "")
	if err != nil {
		return nil, "", err
	}
	b, etag, err := s.c.Get(ctx, under+checkpoint.ManifestName, 16<<20)
	if errors.Is(err, s3sync.ErrNotExist) {
		return nil, "", nil
	}
	return b, etag, err
}

func (s *Store) WriteManifest(ctx context.Context, trial string, body []byte, tag string) error {
	under, err := s.under(trial, "")
	if err != nil {
		return err
	}
	_, err = s.c.PutIf(ctx, under+checkpoint.ManifestName, body, s3sync.Condition{IfNoneMatch: tag == "", IfMatch: tag})
	if errors.Is(err, s3sync.ErrPrecondition) {
		return fmt.Errorf("%s: %w: %w", under+checkpoint.ManifestName, checkpoint.ErrConflict, err)
	}
	return err
}

// under is the folder of trial's version (of everything kept for trial when version is
// ""), refusing names that are not plain: an S3 key holds ".." as it is, and another
// trial's folder is one "../" away.
func (s *Store) under(trial, version string) (string, error) {
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

func (s *Store) Put(ctx context.Context, dir, trial, version string) error {
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

func (s *Store) Get(ctx context.Context, trial, version, dir string) error {
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

func (s *Store) Drop(ctx context.Context, trial, version string) error {
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

// checkName refuses s, a trial's or a version's name (what), unless it is one plain name: an
// S3 key holds ".." as it is, and another trial's folder is one "../" away.
func checkName(what, s string) error {
	if why := pathname.WhyNotPlain(s); why != "" {
		return fmt.Errorf("%s %q is not a plain name (%s)", what, s, why)
	}
	return nil
}
