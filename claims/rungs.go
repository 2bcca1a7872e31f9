package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/runall/runall/s3sync"
	"math"
	"strconv"
	"strings"
	"sync"
)

// rungDir holds the values asha recorded at its rungs, and averageDir the running averages
// median stopping recorded at each step, by every runall of the sweep:
// <dir><rule>/<step>/<trial>.json. A runall reads a value again only when its ETag changed
// (a step drawn again), so each value costs one GET per runall that reads it; a runall that
// was SIGKILLed leaves its values for the others.
const (
	rungDir    = "rungs/"
	averageDir = "averages/"
)

// Rungs is the values of one early-stopping rule (one parallel block) by step, kept in the
// sweep's store so that each runall's decisions use every runall's trials. It is an
// earlystop.Store. Safe for concurrent use.
type Rungs struct {
	store Store
	dir   string
	ctx   context.Context

	mu    sync.Mutex
	known map[string]known // values read or written, by key
}

type known struct {
	etag  string
	value float64
}

// NewRungs keeps asha's rung values of rule (a short name without /, the block's key) in
// st. ctx bounds every request.
func NewRungs(ctx context.Context, st Store, rule string) (*Rungs, error) {
	return newRungs(ctx, st, rungDir, rule)
}

// NewRunningAverages keeps median stopping's running averages of rule (a short name
// without /, the block's key) in st. ctx bounds every request.
func NewRunningAverages(ctx context.Context, st Store, rule string) (*Rungs, error) {
	return newRungs(ctx, st, averageDir, rule)
}

func newRungs(ctx context.Context, st Store, dir, rule string) (*Rungs, error) {
	if rule == "" || strings.ContainsAny(rule, "/ ") {
		return nil, fmt.Errorf("claims: rung values: bad rule name %q", rule)
	}
	return &Rungs{store: st, dir: dir + rule + "/", ctx: ctx, known: map[string]known{}}, nil
}

type rungValue struct {
	Value float64 `json:"value"`
}

// Rung returns the values recorded at step, by trial: one LIST request (per 1,000 values) and
// one GET per value not read before or changed since.
func (r *Rungs) Rung(step int) (map[string]float64, error) {
	dir := r.dir + strconv.Itoa(step) + "/"
	keys, err := r.store.List(r.ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := map[string]float64{}
	for rel, etag := range keys {
		trial, ok := strings.CutSuffix(rel, ".json")
		if !ok {
			continue
		}
		key := dir + rel
		r.mu.Lock()
		k, seen := r.known[key]
		r.mu.Unlock()
		if !seen || k.etag != etag {
			body, etag, err := r.store.Get(r.ctx, key)
			if errors.Is(err, s3sync.ErrNotExist) {
				continue // deleted since the listing
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", key, err)
			}
			var rv rungValue
			if err := json.Unmarshal(body, &rv); err != nil || math.IsNaN(rv.Value) {
				continue // not a value this version wrote: left out
			}
			k = known{etag, rv.Value}
			r.mu.Lock()
			r.known[key] = k
			r.mu.Unlock()
		}
		out[trial] = k.value
	}
	return out, nil
}

// Put records trial's value at step (again: the value it has now).
func (r *Rungs) Put(step int, trial string, v float64) error {
	if trial == "" || strings.ContainsAny(trial, "/ ") {
		return fmt.Errorf("claims: rung values: bad trial name %q", trial)
	}
	body, err := json.Marshal(rungValue{v})
	if err != nil {
		return err
	}
	key := r.dir + strconv.Itoa(step) + "/" + trial + ".json"
	etag, err := r.store.Put(r.ctx, key, body, s3sync.Condition{})
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	r.mu.Lock()
	r.known[key] = known{etag, v}
	r.mu.Unlock()
	return nil
}

// Store is the store the sweep's queue lives in, for what else its runalls share (rung
// values).
func (s *Sweep) Store() Store { return s.store.Store }
