package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/runall/runall/s3sync"
)

// values reads and writes the numbers early stopping shares between runalls (asha's rungs,
// median's running averages, the boards of the rules that pause), each a small JSON object
// kept with its ETag, so that a value is fetched again only when it changed. Safe for
// concurrent use.
type values struct {
	store Store

	mu    sync.Mutex
	known map[string]known // values read or written, by key
}

type known struct {
	etag  string
	value float64
	bad   bool // not a value: said once, left out until it changes
}

// errNotValue is an object where a value belongs that holds none runall can read: torn,
// hand-edited, or written by another program.
var errNotValue = errors.New("not a value runall wrote")

type rungValue struct {
	Value float64 `json:"value"`
}

func newValues(st Store) *values { return &values{store: st, known: map[string]known{}} }

// read returns the value at key, listed with etag: from what was read before when its ETag
// is the same. ok is false when the key is gone since the listing, or holds no value this
// version wrote; that one is an error wrapping errNotValue the first time its version is
// read, and then left out with no error until it changes.
func (vs *values) read(ctx context.Context, key, etag string) (v float64, ok bool, err error) {
	vs.mu.Lock()
	k, seen := vs.known[key]
	vs.mu.Unlock()
	if seen && k.etag == etag {
		return k.value, !k.bad, nil
	}
	body, etag, err := vs.store.Get(ctx, key)
	if errors.Is(err, s3sync.ErrNotExist) {
		return 0, false, nil // deleted since the listing
	}
	if err != nil {
		return 0, false, fmt.Errorf("read %s: %w", key, err)
	}
	var rv struct {
		Value *float64 `json:"value"`
	}
	err = json.Unmarshal(body, &rv)
	if err == nil && (rv.Value == nil || math.IsNaN(*rv.Value)) {
		err = errors.New(`no number at "value"`)
	}
	if err != nil {
		vs.remember(key, known{etag: etag, bad: true})
		return 0, false, fmt.Errorf("%w: %w", errNotValue, err)
	}
	vs.remember(key, known{etag: etag, value: *rv.Value})
	return *rv.Value, true, nil
}

// write puts v at key. The error of a value JSON cannot hold (an infinity) is returned as
// it is, for the caller to name.
func (vs *values) write(ctx context.Context, key string, v float64) error {
	body, err := json.Marshal(rungValue{v})
	if err != nil {
		return err
	}
	etag, err := vs.store.Put(ctx, key, body, s3sync.Condition{})
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	vs.remember(key, known{etag: etag, value: v})
	return nil
}

func (vs *values) remember(key string, k known) {
	vs.mu.Lock()
	vs.known[key] = k
	vs.mu.Unlock()
}
