package checkpoint

import (
	"context"
	"sync"
	"time"
)

// looping is the keeper's look at its directory: stop asks it to end, done closes once it
// has.
type looping struct {
	stop chan struct{}
	done chan struct{}
}

// rollback is what a Keeper needs to take its trial back to a copy kept before a fault
// (Distrust): the manifest it last wrote, and the copies its own replaced, each held for
// Options.Hold after before it is dropped.
type rollback struct {
	mu    sync.Mutex // held across the naming of a copy, so that Distrust sees every copy named
	named *Manifest  // the manifest this attempt last wrote; nil: none
	held  []heldCopy // the copies it replaced, oldest first, not dropped yet
	since time.Time  // non-zero: nothing saved at or after it is trusted (Distrust)
}

// heldCopy is a copy a newer one replaced, and when.
type heldCopy struct {
	m        Manifest
	replaced time.Time
}

// replaced notes that m replaced old (nil: none) as the trial's manifest: old's copy is
// held for o.Hold, and those held longer are dropped. b.mu is held.
func (b *rollback) replaced(ctx context.Context, o Options, old *Manifest, m Manifest) {
	b.named = &m
	now := time.Now()
	if old != nil && old.Version != m.Version {
		b.held = append(b.held, heldCopy{m: *old, replaced: now})
	}
	b.dropReplaced(ctx, o, now.Add(-o.Hold))
}

// dropReplaced drops the held copies replaced at or before t (a leftover is never named by
// a manifest). b.mu is held.
func (b *rollback) dropReplaced(ctx context.Context, o Options, t time.Time) {
	kept := b.held[:0]
	for _, h := range b.held {
		if h.replaced.After(t) {
			kept = append(kept, h)
			continue
		}
		_ = o.Store.Drop(ctx, o.Trial, h.m.Version)
	}
	b.held = kept
}

// closed drops the copies still held once o.Hold has passed: a fault read after the
// attempt ended (one that ended its processes) may still take the trial back to one. o.Held
// is handed what drops them sooner, for a run that ends before then.
func (b *rollback) closed(o Options) {
	var once sync.Once
	drop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			b.mu.Lock()
			defer b.mu.Unlock()
			b.dropReplaced(ctx, o, time.Now())
		})
	}
	if o.Hold <= 0 {
		drop()
		return
	}
	time.AfterFunc(o.Hold, drop)
	if o.Held != nil {
		o.Held(drop)
	}
}

// distrusted reports whether Distrust was asked: no copy is kept any more.
func (b *rollback) distrusted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.since.IsZero()
}

// Distrust takes the trial back to the newest copy kept before since (a memory error of
// its GPU then: what it computed after may be wrong), while the attempt runs or after it
// ended: the copies this attempt kept at or after since are dropped, the manifest names
// that copy again (with none held, the trial starts again from its start), and no copy is
// kept from now on, nor as the attempt ends. A manifest another writer wrote since is left
// as it is. It returns the step the trial resumes from (-1: its start).
func (k *Keeper) Distrust(ctx context.Context, since time.Time) int {
	b, st, trial := &k.back, k.o.Store, k.o.Trial
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since.IsZero() || since.Before(b.since) {
		b.since = since
	}
	if b.named == nil || b.named.SavedAt.Before(b.since) {
		return k.Landed() // nothing kept after it
	}
	var back *Manifest
	drop := []string{b.named.Version}
	for i := len(b.held) - 1; i >= 0; i-- {
		if h := b.held[i].m; back == nil && h.SavedAt.Before(b.since) {
			back = &h
		} else {
			drop = append(drop, h.Version)
		}
	}
	body, tag, err := st.ReadManifest(ctx, trial)
	if err != nil || body == nil {
		return k.Landed()
	}
	if cur, err := decodeManifest(manifestAt(st, trial), body); err != nil || cur.Version != b.named.Version {
		return k.Landed() // another writer's since
	}
	step := -1
	if back != nil {
		err, step = st.WriteManifest(ctx, trial, back.encode(), tag), back.Step
	} else {
		err = st.Drop(ctx, trial, "")
	}
	if err != nil {
		k.notes.sayf("copies kept after the fault not dropped: %v", err)
		return k.Landed()
	}
	for _, v := range drop {
		_ = st.Drop(ctx, trial, v)
	}
	b.named, b.held = back, nil
	k.mu.Lock()
	k.landed = step
	k.mu.Unlock()
	if step < 0 {
		k.notes.sayf("the copies kept after the fault are dropped: none was kept before it, the trial starts again from its start")
	} else {
		k.notes.sayf("the copies kept after the fault are dropped: the trial resumes from step %d, kept before it", step)
	}
	return step
}
