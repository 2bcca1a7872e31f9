// Package claims is a queue of a sweep's trials shared by several runall processes through
// an object store, with no server of its own: a trial is taken by creating its claim object
// with a conditional write (exactly one writer wins), held by renewing that object with
// writes conditional on its last ETag, and recorded once, when it ends, by a done object
// created the same way. A claim whose holder stops renewing it may be taken over. It knows
// nothing of task files or the scheduler: trials are keys, results are opaque JSON.
package claims

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/runall/runall/s3sync"
)

// Store is what the queue needs of an object store. Keys are relative to the sweep's
// prefix ("claims/abc.json").
type Store interface {
	// Get returns an object's body and ETag, or an error wrapping s3sync.ErrNotExist.
	Get(ctx context.Context, key string) (body []byte, etag string, err error)
	// Put writes body under cond (s3sync's conditions, which S3 and MinIO keep) and returns
	// the new ETag, or an error wrapping s3sync.ErrPrecondition.
	Put(ctx context.Context, key string, body []byte, cond s3sync.Condition) (etag string, err error)
	// List returns the ETag of every object under dir ("done/"), by key relative to dir.
	List(ctx context.Context, dir string) (map[string]string, error)
	// Delete removes an object; one that is not there is no error.
	Delete(ctx context.Context, key string) error
}

// S3 is a Store over an S3 prefix (s3://bucket/prefix/).
type S3 struct {
	c      *s3sync.Client
	prefix string
}

// NewS3 makes a Store of the prefix url, which must be an s3:// URL.
func NewS3(c *s3sync.Client, url string) (*S3, error) {
	if !strings.HasPrefix(url, "s3://") || len(strings.TrimPrefix(url, "s3://")) == 0 {
		return nil, fmt.Errorf("claims %q: want an s3://BUCKET/PREFIX/ URL", url)
	}
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	return &S3{c: c, prefix: url}, nil
}

// maxObject bounds what Get reads: claims and records are a few hundred bytes, the merged
// results a few MB.
const maxObject = 256 << 20

// URL is where key lives.
func (s *S3) URL(key string) string { return s.prefix + key }

func (s *S3) Get(ctx context.Context, key string) ([]byte, string, error) {
	return s.c.Get(ctx, s.URL(key), maxObject)
}

func (s *S3) Put(ctx context.Context, key string, body []byte, cond s3sync.Condition) (string, error) {
	return s.c.PutIf(ctx, s.URL(key), body, cond)
}

func (s *S3) Delete(ctx context.Context, key string) error { return s.c.Delete(ctx, s.URL(key)) }

func (s *S3) List(ctx context.Context, dir string) (map[string]string, error) {
	out := map[string]string{}
	err := s.c.List(ctx, s.URL(dir), func(o s3sync.Listed) error {
		out[o.Rel] = o.ETag
		return nil
	})
	return out, err
}

// Counts is how many requests a Sweep made, by kind: the cost of claiming.
type Counts struct{ Get, Put, List, Delete int64 }

// Total is every request.
func (c Counts) Total() int64 { return c.Get + c.Put + c.List + c.Delete }

// counted counts a Store's requests.
type counted struct {
	Store
	get, put, list, del atomic.Int64
}

func (c *counted) Get(ctx context.Context, key string) ([]byte, string, error) {
	c.get.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *counted) Put(ctx context.Context, key string, body []byte, cond s3sync.Condition) (string, error) {
	c.put.Add(1)
	return c.Store.Put(ctx, key, body, cond)
}

func (c *counted) List(ctx context.Context, dir string) (map[string]string, error) {
	c.list.Add(1)
	return c.Store.List(ctx, dir)
}

func (c *counted) Delete(ctx context.Context, key string) error {
	c.del.Add(1)
	return c.Store.Delete(ctx, key)
}

func (c *counted) counts() Counts {
	return Counts{Get: c.get.Load(), Put: c.put.Load(), List: c.list.Load(), Delete: c.del.Load()}
}
