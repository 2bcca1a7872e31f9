// Package claims is a queue of a sweep's trials shared by several runall processes through
// an object store, with no server of its own: a trial is taken by creating its claim object
// with a conditional write (exactly one writer wins), held by renewing that object with
// writes conditional on its last ETag, and recorded once, when it ends, by a done object
// created the same way. A claim whose holder stops renewing it may be taken over. It knows
// nothing of task files or the scheduler: trials are keys, results are opaque JSON.
package claims

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/runall/runall/s3sync"
)

// ErrConflict is a conditional write that lost: the object exists, or changed.
var ErrConflict = errors.New("conditional write lost")

// ErrNotFound is an object that is not there.
var ErrNotFound = errors.New("not found")

// Cond is what a write requires of the object it replaces; the zero value requires nothing.
type Cond struct {
	IfAbsent bool   // only when there is no object
	IfETag   string // only when the object's ETag is this
}

// Store is what the queue needs of an object store. Keys are relative to the sweep's
// prefix ("claims/abc.json").
type Store interface {
	// Get returns an object's body and ETag, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) (body []byte, etag string, err error)
	// Put writes body under cond and returns the new ETag, or an error wrapping ErrConflict.
	Put(ctx context.Context, key string, body []byte, cond Cond) (etag string, err error)
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
	b, etag, err := s.c.Get(ctx, s.URL(key), maxObject)
	if errors.Is(err, s3sync.ErrNotExist) {
		return nil, "", fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return b, etag, err
}

func (s *S3) Put(ctx context.Context, key string, body []byte, cond Cond) (string, error) {
	etag, err := s.c.PutIf(ctx, s.URL(key), body, s3sync.Condition{IfNoneMatch: cond.IfAbsent, IfMatch: cond.IfETag})
	if errors.Is(err, s3sync.ErrPrecondition) {
		return "", fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return etag, err
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

// Mem is an in-memory Store for tests; Fail makes it refuse requests, as a store that is
// down would.
type Mem struct {
	mu   sync.Mutex
	objs map[string]memObject
	seq  int
	down atomic.Bool
}

type memObject struct {
	body []byte
	etag string
}

// NewMem makes an empty in-memory Store.
func NewMem() *Mem { return &Mem{objs: map[string]memObject{}} }

var errDown = errors.New("store unavailable")

// Fail makes every request fail (true) or succeed again (false).
func (m *Mem) Fail(down bool) { m.down.Store(down) }

func (m *Mem) Get(_ context.Context, key string) ([]byte, string, error) {
	if m.down.Load() {
		return nil, "", errDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return nil, "", fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return append([]byte(nil), o.body...), o.etag, nil
}

func (m *Mem) Put(_ context.Context, key string, body []byte, cond Cond) (string, error) {
	if m.down.Load() {
		return "", errDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, exists := m.objs[key]
	if cond.IfAbsent && exists || cond.IfETag != "" && (!exists || o.etag != cond.IfETag) {
		return "", fmt.Errorf("%s: %w", key, ErrConflict)
	}
	m.seq++
	etag := strconv.Itoa(m.seq)
	m.objs[key] = memObject{body: append([]byte(nil), body...), etag: etag}
	return etag, nil
}

func (m *Mem) List(_ context.Context, dir string) (map[string]string, error) {
	if m.down.Load() {
		return nil, errDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, o := range m.objs {
		if rel, ok := strings.CutPrefix(k, dir); ok {
			out[rel] = o.etag
		}
	}
	return out, nil
}

func (m *Mem) Delete(_ context.Context, key string) error {
	if m.down.Load() {
		return errDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

// Keys lists every key in the store, for tests.
func (m *Mem) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedKeys(maps.Keys(m.objs))
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

func (c *counted) Put(ctx context.Context, key string, body []byte, cond Cond) (string, error) {
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
