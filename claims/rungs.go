package claims

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/internal/pathname"
)

// rungDir holds the values asha recorded at its rungs, and averageDir the running averages
// median stopping recorded at each step, by every runall of the sweep:
// <dir><rule>/<step>/<trial>.json. A runall reads a value again only when its ETag changed
// (a step drawn again), so each value costs one GET per runall that reads it; a runall that
// was SIGKILLed leaves its values for the others.
const (
	rungDir     = "rungs/"
	averageDir  = "averages/"
	forecastDir = "forecasts/"
)

// Rungs is the values of one early-stopping rule (one parallel block) by step, kept in the
// sweep's store so that each runall's decisions use every runall's trials. It is an
// earlystop.Store. Safe for concurrent use.
type Rungs struct {
	vals *values
	dir  string
	ctx  context.Context
	say  func(string) // tells of a value that cannot be read; nil: nothing is told
}

// NewRungs keeps asha's rung values of rule (a plain name, the block's key) in
// st. ctx bounds every request.
func NewRungs(ctx context.Context, st Store, rule string) (*Rungs, error) {
	return newRungs(ctx, st, rungDir, rule)
}

// NewRunningAverages keeps median stopping's running averages of rule (a short name
// without /, the block's key) in st. ctx bounds every request.
func NewRunningAverages(ctx context.Context, st Store, rule string) (*Rungs, error) {
	return newRungs(ctx, st, averageDir, rule)
}

// NewForecasts keeps early-stop method forecast's values of rule (a short name without /,
// the block's key) in st: each trial's value at max under that step, its latest forecast
// (the value it offers to beat) under step 0, and its values at the steps the rule decides
// at under theirs (the prefixes its references are matched on). ctx bounds every request.
func NewForecasts(ctx context.Context, st Store, rule string) (*Rungs, error) {
	return newRungs(ctx, st, forecastDir, rule)
}

func newRungs(ctx context.Context, st Store, dir, rule string) (*Rungs, error) {
	if why := pathname.WhyNotPlain(rule); why != "" {
		return nil, fmt.Errorf("claims: rung values: rule name %q is not a plain name (%s)", rule, why)
	}
	return &Rungs{vals: newValues(st), dir: dir + rule + "/", ctx: ctx}, nil
}

// Rung returns the values recorded at step, by trial: one LIST request (per 1,000 values) and
// one GET per value not read before or changed since.
func (r *Rungs) Rung(step int) (map[string]float64, error) {
	dir := r.dir + strconv.Itoa(step) + "/"
	keys, err := r.vals.store.List(r.ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := map[string]float64{}
	for rel, etag := range keys {
		trial, ok := strings.CutSuffix(rel, ".json")
		if !ok {
			continue
		}
		v, ok, err := r.vals.read(r.ctx, dir+rel, etag)
		if errors.Is(err, errNotValue) {
			r.unread(dir+rel, trial, step, err) // decided without it: nothing waits for a value
			continue
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out[trial] = v
		}
	}
	return out, nil
}

// OnUnread sets how the rule's values tell, once per version of the object, of a trial's
// value that cannot be read (torn, or not one runall wrote): the rule decides without it.
// Set before the first Rung.
func (r *Rungs) OnUnread(say func(string)) { r.say = say }

func (r *Rungs) unread(key, trial string, step int, err error) {
	if r.say == nil {
		return
	}
	if u, ok := r.vals.store.(interface{ URL(string) string }); ok {
		key = u.URL(key)
	}
	r.say(fmt.Sprintf("early-stop: the value of trial %s at step %d (%s) cannot be read (%v): the rule decides without it; "+
		"write {\"value\": N} there (its value at that step), or delete it", trial, step, key, err))
}

// Put records trial's value at step (again: the value it has now).
func (r *Rungs) Put(step int, trial string, v float64) error {
	if why := pathname.WhyNotPlain(trial); why != "" {
		return fmt.Errorf("claims: rung values: trial name %q is not a plain name (%s)", trial, why)
	}
	return r.vals.write(r.ctx, r.dir+strconv.Itoa(step)+"/"+trial+".json", v)
}

// Store is the store the sweep's queue lives in, for what else its runalls share (rung
// values).
func (s *Sweep) Store() Store { return s.store.Store }
