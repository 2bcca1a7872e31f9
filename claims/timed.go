package claims

import (
	"context"
	"fmt"
	"time"

	"github.com/runall/runall/s3sync"
)

// Timed is a Store whose every request ends within d: a store that accepts connections and
// never answers makes an error, which the caller reports (and tries again), instead of a
// wait with no end.
func Timed(st Store, d time.Duration) Store { return timed{st, d} }

type timed struct {
	st Store
	d  time.Duration
}

// bound is ctx ending within d, and the error a request that ran out of it returns.
func (t timed) bound(ctx context.Context, what string, err *error) (context.Context, func()) {
	ctx, cancel := context.WithTimeout(ctx, t.d)
	return ctx, func() {
		if *err != nil && ctx.Err() == context.DeadlineExceeded {
			*err = fmt.Errorf("%s: no answer within %v: %w", what, t.d, *err)
		}
		cancel()
	}
}

func (t timed) Get(ctx context.Context, key string) (body []byte, etag string, err error) {
	ctx, done := t.bound(ctx, "get "+key, &err)
	defer done()
	return t.st.Get(ctx, key)
}

func (t timed) Put(ctx context.Context, key string, body []byte, cond s3sync.Condition) (etag string, err error) {
	ctx, done := t.bound(ctx, "put "+key, &err)
	defer done()
	return t.st.Put(ctx, key, body, cond)
}

func (t timed) List(ctx context.Context, dir string) (keys map[string]string, err error) {
	ctx, done := t.bound(ctx, "list "+dir, &err)
	defer done()
	return t.st.List(ctx, dir)
}

func (t timed) Delete(ctx context.Context, key string) (err error) {
	ctx, done := t.bound(ctx, "delete "+key, &err)
	defer done()
	return t.st.Delete(ctx, key)
}
