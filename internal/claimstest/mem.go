// Package claimstest is an in-memory claims.Store for the tests of claims and of the
// runner, which need a queue without an S3 server (the S3 tests use a real MinIO too).
package claimstest

import (
	"context"
	"errors"
	"fmt"
	"github.com/runall/runall/s3sync"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Mem is an in-memory claims.Store for tests; Fail makes it refuse requests, as a store
// that is down would.
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

// NewMem makes an empty in-memory store.
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
		return nil, "", fmt.Errorf("%s: %w", key, s3sync.ErrNotExist)
	}
	return append([]byte(nil), o.body...), o.etag, nil
}

func (m *Mem) Put(_ context.Context, key string, body []byte, cond s3sync.Condition) (string, error) {
	if m.down.Load() {
		return "", errDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, exists := m.objs[key]
	if cond.IfNoneMatch && exists || cond.IfMatch != "" && (!exists || o.etag != cond.IfMatch) {
		return "", fmt.Errorf("%s: %w", key, s3sync.ErrPrecondition)
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
	return slices.Sorted(maps.Keys(m.objs))
}
