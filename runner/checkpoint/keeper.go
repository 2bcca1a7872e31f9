package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/runall/runall/runner/results"
)

// Options is what a Keeper is given for one attempt of a trial.
type Options struct {
	Store  Store
	Trial  string        // the trial's identity: its folder in the store
	Dir    string        // the checkpoint directory, absolute
	Every  time.Duration // how often the directory is looked at
	Writer string        // names this attempt's copies: unique per attempt of the sweep
	RunID  string
	Base   *Manifest    // the kept checkpoint this attempt resumed from; nil: it started fresh
	Say    func(string) // tells the trial's output and log
	// Hold is how long a copy a newer one replaced is kept after, so that a fault found
	// later (a GPU's memory error, read every 2 s) may take the trial back to it
	// (Distrust); 0 drops it at once.
	Hold time.Duration
	// Held, when set, is handed at Close what drops the copies still held at once, for the
	// run to call as it ends before Hold has passed; nil: they are dropped after Hold.
	Held func(dropNow func())
}

// Keeper keeps one attempt's checkpoint directory: a copy each time it changes and
// settles, or the script says so (a runall-checkpoint line), and one when the attempt
// ends. Safe for concurrent use.
type Keeper struct {
	o       Options
	poke    chan struct{}
	started time.Time
	loop    looping
	steps   *steps
	notes   *notes
	back    rollback // what it replaced and still holds, for Distrust (rollback.go)

	mu      sync.Mutex
	kept    scan // what the newest copy holds (or what was restored)
	landed  int  // the step the newest copy holds; -1: none
	changed int  // the step the directory last changed at, kept or not
	arrived chan struct{}
}

// Start keeps o.Dir until Close. It looks at the directory as it is now (restored from
// o.Base, or as it was left) as what is already kept.
func Start(ctx context.Context, o Options) *Keeper {
	o.Every = max(o.Every, 10*time.Millisecond)
	k := &Keeper{o: o, started: time.Now().UTC(), poke: make(chan struct{}, 1), loop: looping{stop: make(chan struct{}), done: make(chan struct{})},
		steps: newSteps(o.Base), notes: &notes{say: o.Say, dir: o.Dir, every: o.Every}, landed: -1, arrived: make(chan struct{})}
	if o.Base != nil {
		k.landed, k.changed = o.Base.Step, o.Base.Step
	}
	k.kept, _ = scanDir(o.Dir)
	go k.look(ctx)
	return k
}

// Metric records a value the trial reported at step (its series and its step count).
func (k *Keeper) Metric(name string, v float64, step int) { k.steps.add(name, v, step) }

// Said takes a runall-checkpoint line: the directory holds step now (step < 0: the
// trial's current step). It is copied at once.
func (k *Keeper) Said(step int) {
	k.steps.say(step)
	select {
	case k.poke <- struct{}{}:
	default:
	}
}

// Resumes are the trial's starts from a kept checkpoint up to this attempt's, this one
// included; nil for an attempt that started fresh.
func (k *Keeper) Resumes() []results.Resume {
	b := k.o.Base
	if b == nil {
		return nil
	}
	return append(slices.Clone(b.Resumes), results.Resume{Step: b.Step, RunID: k.o.RunID, At: k.started})
}

// Landed is the step the newest kept copy holds; -1 when none.
func (k *Keeper) Landed() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.landed
}

// Changed is the step at which the directory was last seen to change (kept or not).
func (k *Keeper) Changed() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.changed
}

// WaitFor waits until a copy of step n or later has landed, for at most wait; it reports
// whether one did.
func (k *Keeper) WaitFor(ctx context.Context, n int, wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		k.mu.Lock()
		landed, arrived := k.landed, k.arrived
		k.mu.Unlock()
		if landed >= n {
			return true
		}
		select {
		case <-arrived:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Close stops looking and keeps what the directory holds now, once the attempt's
// processes have ended and it is quiet; unless the script prints runall-checkpoint lines:
// what it saved after its last line is not said to be whole. It returns the step the
// newest copy holds.
func (k *Keeper) Close(ctx context.Context) int {
	k.mu.Lock()
	select {
	case <-k.loop.stop: // closed already
		k.mu.Unlock()
		return k.Landed()
	default:
		close(k.loop.stop)
	}
	k.mu.Unlock()
	<-k.loop.done
	s, err := scanDir(k.o.Dir)
	if err != nil {
		k.notes.unscanned(err)
	} else if !s.empty() && !k.isKept(s) && !k.steps.explicit() && !k.back.distrusted() {
		k.keep(ctx, s, k.steps.stepAt(s.newest))
	}
	k.back.closed(k.o)
	return k.Landed()
}

func (k *Keeper) look(ctx context.Context) {
	defer close(k.loop.done)
	t := time.NewTicker(k.o.Every)
	defer t.Stop()
	for {
		said := false
		select {
		case <-k.loop.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		case <-k.poke:
			said = true
		}
		s, err := scanDir(k.o.Dir)
		if err != nil {
			k.notes.unscanned(err)
			continue
		}
		if s.empty() || k.isKept(s) {
			continue
		}
		k.mu.Lock()
		k.changed = max(k.changed, k.steps.stepAt(s.newest))
		k.mu.Unlock()
		// A changed directory is copied once it holds still for a moment, or at once when
		// the script says it is complete; a script that says so is taken at its word.
		if !said && k.steps.explicit() {
			continue
		}
		if !said {
			var still bool
			if s, still = k.settled(ctx, s); !still {
				k.notes.moving(k.steps.explicit())
				continue // still being written: the next look tries again
			}
		}
		k.keep(ctx, s, k.steps.stepAt(s.newest))
	}
}

// settle is how long a changed directory must hold still before it is copied: enough for
// a script that writes several files to be seen writing the next.
func (k *Keeper) settle() time.Duration { return min(k.o.Every/2, 250*time.Millisecond) }

// settled looks at the directory again after settle; still is whether it held still.
func (k *Keeper) settled(ctx context.Context, s scan) (scan, bool) {
	timer := time.NewTimer(k.settle())
	defer timer.Stop()
	select {
	case <-k.loop.stop:
		return s, false // Close takes the last copy
	case <-ctx.Done():
		return s, false
	case <-timer.C:
	}
	again, err := scanDir(k.o.Dir)
	return again, err == nil && again.same(s)
}

func (k *Keeper) isKept(s scan) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return s.same(k.kept)
}

// keep copies the directory as s saw it into a new version, and names it in the manifest
// when nothing newer is kept. A directory that changed while it was copied is not kept.
func (k *Keeper) keep(ctx context.Context, s scan, step int) {
	version := versionName(step, k.o.Writer, time.Now().UnixNano())
	st := k.o.Store
	if err := st.Put(ctx, k.o.Dir, k.o.Trial, version); err != nil {
		k.notes.sayf("could not copy %s (tried again when it changes or the trial ends): %v", k.o.Dir, err)
		_ = st.Drop(context.WithoutCancel(ctx), k.o.Trial, version)
		return
	}
	if after, err := scanDir(k.o.Dir); err != nil || !after.same(s) {
		_ = st.Drop(ctx, k.o.Trial, version) // torn: it changed while copied; the next look copies it again
		k.notes.moving(k.steps.explicit())
		return
	}
	k.notes.still(s)
	m := Manifest{Trial: k.o.Trial, Step: step, Version: version, Files: len(s.files), Bytes: s.bytes,
		Writer: k.o.Writer, RunID: k.o.RunID, SavedAt: time.Now().UTC(), Series: upTo(k.steps.series(), step), Links: s.links}
	if b := k.o.Base; b != nil {
		m.Base, m.From = b.Version, b.From
	}
	m.Resumes = k.Resumes()
	k.back.mu.Lock() // Distrust waits: a copy named after it would be trusted again
	defer k.back.mu.Unlock()
	if !k.back.since.IsZero() {
		_ = st.Drop(ctx, k.o.Trial, version) // made after a fault that distrusts it
		return
	}
	old, err := k.name(ctx, m)
	if err != nil {
		_ = st.Drop(ctx, k.o.Trial, version)
		k.notes.sayf("step %d not kept: %v", step, err)
		k.setKept(s, -1)
		return
	}
	k.back.replaced(ctx, k.o, old, m)
	k.setKept(s, step)
}

// errNewer is a kept copy that a copy of this attempt may not replace.
var errNewer = errors.New("a newer copy is kept")

// name writes m as the trial's manifest when it may replace the kept one, and returns the
// manifest it replaced (nil: none).
func (k *Keeper) name(ctx context.Context, m Manifest) (*Manifest, error) {
	for range 8 {
		body, tag, err := k.o.Store.ReadManifest(ctx, k.o.Trial)
		if err != nil {
			return nil, err
		}
		var old *Manifest
		if body != nil {
			cur, err := decodeManifest(manifestAt(k.o.Store, k.o.Trial), body)
			if err != nil {
				return nil, err
			}
			if !cur.replacedBy(m.Step, m.Writer, m.Base) {
				return nil, fmt.Errorf("%w: step %d by %s (%s)", errNewer, cur.Step, cur.Writer, k.o.Store.Where(k.o.Trial))
			}
			old = &cur
		}
		err = k.o.Store.WriteManifest(ctx, k.o.Trial, m.encode(), tag)
		if errors.Is(err, ErrConflict) {
			continue // another writer came first: look again
		}
		return old, err
	}
	return nil, fmt.Errorf("manifest of %s: written by others at every try", k.o.Trial)
}

func (k *Keeper) setKept(s scan, step int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = s
	if step >= 0 && step >= k.landed {
		k.landed = step
		close(k.arrived)
		k.arrived = make(chan struct{})
	}
}

// steps is what the trial reported, for the step a copy holds and the series it keeps.
type steps struct {
	mu     sync.Mutex
	base   int                // the step it resumed from
	times  []time.Time        // when each step after base was first reported
	points map[string][]Point // every value, base's series included
	said   int                // the last runall-checkpoint step; -1: none
}

func newSteps(base *Manifest) *steps {
	s := &steps{points: map[string][]Point{}, said: -1}
	if base != nil {
		s.base = base.Step
		for name, pts := range base.Series {
			s.points[name] = append([]Point(nil), pts...)
		}
	}
	return s
}

func (s *steps) add(name string, v float64, step int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.points[name] = append(s.points[name], Point{step, v})
	for s.base+len(s.times) < step {
		s.times = append(s.times, time.Now())
	}
}

func (s *steps) say(step int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if step < 0 {
		step = s.base + len(s.times)
	}
	s.said = step
}

func (s *steps) explicit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.said >= 0
}

// saveThenPrint is how soon after a checkpoint's newest file a step's first value may be
// read and still count as saved in it: scripts that save then print the epoch (Keras's
// BackupAndRestore before its progress bar) land on the step they saved, as do scripts
// that print then save.
const saveThenPrint = 100 * time.Millisecond

// stepAt is the step a copy holds whose newest file was written at t: the one the script
// said, else the steps reported before t (saveThenPrint after it).
func (s *steps) stepAt(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.said >= 0 {
		return s.said
	}
	t = t.Add(saveThenPrint)
	return s.base + sort.Search(len(s.times), func(i int) bool { return s.times[i].After(t) })
}

func (s *steps) series() map[string][]Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]Point, len(s.points))
	for k, v := range s.points {
		out[k] = append([]Point(nil), v...)
	}
	return out
}
