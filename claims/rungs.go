package claims

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// rungDir holds the values early stopping recorded at its rungs, by every runall of the
// sweep: rungs/<rule>/<step>/<trial>.json. A value is written once and never changes, so
// each is read once; a runall that was SIGKILLed leaves its values for the others.
const rungDir = "rungs/"

// Rungs is the rung values of one early-stopping rule (one parallel block), kept in the
// sweep's store so that each runall's decisions use every runall's trials. It is an
// earlystop.Store. Safe for concurrent use.
type Rungs struct {
	store Store
	dir   string
	ctx   context.Context

	mu    sync.Mutex
	known map[string]float64 // values read, by key
}

// NewRungs keeps the rung values of rule (a short name without /, the block's key) in st.
// ctx bounds every request.
func NewRungs(ctx context.Context, st Store, rule string) (*Rungs, error) {
	if rule == "" || strings.ContainsAny(rule, "/ ") {
		return nil, fmt.Errorf("claims: rung values: bad rule name %q", rule)
	}
	return &Rungs{store: st, dir: rungDir + rule + "/", ctx: ctx, known: map[string]float64{}}, nil
}

type rungValue struct {
	Value float64 `json:"value"`
}

// Rung returns the values recorded at step, by trial.
func (r *Rungs) Rung(step int) (map[string]float64, error) {
	dir := r.dir + strconv.Itoa(step) + "/"
	keys, err := r.store.List(r.ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := map[string]float64{}
	for rel := range keys {
		trial, ok := strings.CutSuffix(rel, ".json")
		if !ok {
			continue
		}
		key := dir + rel
		r.mu.Lock()
		v, seen := r.known[key]
		r.mu.Unlock()
		if !seen {
			body, _, err := r.store.Get(r.ctx, key)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", key, err)
			}
			var rv rungValue
			if err := json.Unmarshal(body, &rv); err != nil || math.IsNaN(rv.Value) {
				continue // not a value this version wrote: left out
			}
			v = rv.Value
			r.mu.Lock()
			r.known[key] = v
			r.mu.Unlock()
		}
		out[trial] = v
	}
	return out, nil
}

// Put records trial's value at step.
func (r *Rungs) Put(step int, trial string, v float64) error {
	if trial == "" || strings.ContainsAny(trial, "/ ") {
		return fmt.Errorf("claims: rung values: bad trial name %q", trial)
	}
	body, err := json.Marshal(rungValue{v})
	if err != nil {
		return err
	}
	key := r.dir + strconv.Itoa(step) + "/" + trial + ".json"
	if _, err := r.store.Put(r.ctx, key, body, Cond{}); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	r.mu.Lock()
	r.known[key] = v
	r.mu.Unlock()
	return nil
}

// Store is the store the sweep's queue lives in, for what else its runalls share (rung
// values).
func (s *Sweep) Store() Store { return s.store.Store }
