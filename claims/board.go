package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/internal/pathname"
	"github.com/runall/runall/s3sync"
)

// boardDir holds the boards of the early-stopping rules that pause trials at their
// checkpoints (sha, hyperband, pbt), one per block: <dir><rule>/<step>/<trial>.json holds a
// trial's value at a round's step, written once it has paused there;
// <dir><rule>/ended/<trial>.json says that it ended for good. Every runall of the sweep
// decides the rounds from the same board.
const boardDir = "rounds/"

// The folders of a board's ended trials, and of pbt's copies of checkpoints: copying/ names
// the runall that took a copy on (created if absent: one runall copies), copied/ says the copy
// is there, so that the trial may resume from it.
const (
	endedDir   = "ended/"
	copyingDir = "copying/"
	copiedDir  = "copied/"
)

// Board is the values of one synchronous rule (one parallel block) at its rounds' steps,
// and its trials that ended, kept in the sweep's store. Safe for concurrent use.
type Board struct {
	vals *values
	dir  string
	say  func(string) // tells of a value that cannot be read; nil: nothing is told
}

// NewBoard keeps the board of rule (a plain name, the block's key) in st.
func NewBoard(st Store, rule string) (*Board, error) {
	if why := pathname.WhyNotPlain(rule); why != "" {
		return nil, fmt.Errorf("claims: board: rule name %q is not a plain name (%s)", rule, why)
	}
	return &Board{vals: newValues(st), dir: boardDir + rule + "/"}, nil
}

// OnUnread sets how the board tells, once per version of the object, of a trial's value
// that cannot be read (torn, or not one runall wrote): that trial has no value at its
// round, so the round waits for it, and the line says how to let it go on. Set before the
// first Load.
func (b *Board) OnUnread(say func(string)) { b.say = say }

// Load reads the whole board: one LIST (per 1,000 entries), and one GET per value not read
// before or changed since. values are by step, by trial; ended is the trials that ended;
// copied is pbt's copies made, by "step/trial".
func (b *Board) Load(ctx context.Context) (values map[int]map[string]float64, ended, copied map[string]bool, err error) {
	keys, err := b.vals.store.List(ctx, b.dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list %s: %w", b.dir, err)
	}
	values, ended, copied = map[int]map[string]float64{}, map[string]bool{}, map[string]bool{}
	var unread []func() // told once every trial that ended is known
	for rel, etag := range keys {
		if c, ok := strings.CutPrefix(rel, copiedDir); ok {
			copied[strings.TrimSuffix(c, ".json")] = true
			continue
		}
		at, file, ok := strings.Cut(rel, "/")
		trial, isJSON := strings.CutSuffix(file, ".json")
		if !ok || !isJSON {
			continue
		}
		if at+"/" == endedDir {
			ended[trial] = true
			continue
		}
		step, err := strconv.Atoi(at)
		if err != nil {
			continue // not a board this version wrote
		}
		v, ok, err := b.vals.read(ctx, b.dir+rel, etag)
		if errors.Is(err, errNotValue) {
			unread = append(unread, func() { b.unread(ended, trial, step, err) })
			continue
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if ok {
			if values[step] == nil {
				values[step] = map[string]float64{}
			}
			values[step][trial] = v
		}
	}
	for _, tell := range unread {
		tell()
	}
	return values, ended, copied, nil
}

// unread tells of trial's value at step that cannot be read: its round waits for it,
// unless it ended.
func (b *Board) unread(ended map[string]bool, trial string, step int, err error) {
	if b.say == nil || ended[trial] {
		return
	}
	key := b.dir + strconv.Itoa(step) + "/" + trial + ".json"
	where, end := key, b.dir+endedDir+trial+".json"
	if u, ok := b.vals.store.(interface{ URL(string) string }); ok {
		where, end = u.URL(key), u.URL(end)
	}
	b.say(fmt.Sprintf("early-stop: the board's value of trial %s at step %d cannot be read (%v): its round waits for it; "+
		"write {\"value\": N} to %s (its value there), or {} to %s so that the round goes on without it", trial, step, err, where, end))
}

// Value records trial's value at a round's step.
func (b *Board) Value(ctx context.Context, step int, trial string, v float64) error {
	if why := pathname.WhyNotPlain(trial); why != "" {
		return fmt.Errorf("claims: board: trial name %q is not a plain name (%s)", trial, why)
	}
	err := b.vals.write(ctx, b.dir+strconv.Itoa(step)+"/"+trial+".json", v)
	var bad *json.UnsupportedValueError
	if errors.As(err, &bad) {
		return fmt.Errorf("claims: board: %s's value at step %d: %w", trial, step, err)
	}
	return err
}

// Ended records that trial ended for good: no round waits for it any more.
func (b *Board) Ended(ctx context.Context, trial string) error {
	if why := pathname.WhyNotPlain(trial); why != "" {
		return fmt.Errorf("claims: board: trial name %q is not a plain name (%s)", trial, why)
	}
	key := b.dir + endedDir + trial + ".json"
	if _, err := b.vals.store.Put(ctx, key, []byte("{}\n"), s3sync.Condition{}); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// TakeCopy reports whether this runall is the one to copy a checkpoint for trial at a pbt
// round's step: the first to ask is.
func (b *Board) TakeCopy(ctx context.Context, step int, trial string) (bool, error) {
	key := b.dir + copyingDir + strconv.Itoa(step) + "/" + trial + ".json"
	_, err := b.vals.store.Put(ctx, key, []byte("{}\n"), s3sync.Condition{IfNoneMatch: true})
	switch {
	case errors.Is(err, s3sync.ErrPrecondition):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("write %s: %w", key, err)
	}
	return true, nil
}

// Copied records that trial's copy at a pbt round's step is made.
func (b *Board) Copied(ctx context.Context, step int, trial string) error {
	key := b.dir + copiedDir + strconv.Itoa(step) + "/" + trial + ".json"
	if _, err := b.vals.store.Put(ctx, key, []byte("{}\n"), s3sync.Condition{}); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}
