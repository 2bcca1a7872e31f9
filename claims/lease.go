package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/s3sync"
)

// ErrLost is a claim this runall no longer holds: another runall took it over, or it could
// not be renewed in time. The trial must stop: someone else may be running it.
var ErrLost = errors.New("lost the claim")

// Lease is a claim this runall holds. It renews itself every third of the lease until Finish
// or Release; Lost closes when it can no longer be sure it holds the claim.
type Lease struct {
	s     *Sweep
	key   string
	every time.Duration

	mu     sync.Mutex
	etag   string
	sentOK time.Time // when the last write that succeeded was sent
	err    error     // why it was lost
	lost   chan struct{}
	quit   chan struct{}
	ended  chan struct{}
	once   sync.Once
}

func (s *Sweep) newLease(key, etag string) *Lease {
	l := &Lease{s: s, key: key, every: s.opts.Lease / 3, etag: etag, sentOK: s.opts.Now(),
		lost: make(chan struct{}), quit: make(chan struct{}), ended: make(chan struct{})}
	go l.run()
	return l
}

// Key is the trial's key.
func (l *Lease) Key() string { return l.key }

// Lost closes when the claim is lost; Err then says why.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err is why the claim was lost, nil while it is held.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// safeFor is how long after its last successful write a claim is surely still this
// runall's: others wait a whole lease, as they see it, after they first see that write.
// The sixth of the lease left is the time to stop the trial (SIGTERM, then SIGKILL after at
// most a twelfth of the lease) before anyone may take it over.
func (l *Lease) safeFor() time.Duration { return l.s.opts.Lease * 5 / 6 }

func (l *Lease) run() {
	defer close(l.ended)
	wait := l.every
	for {
		// Wake up no later than the end of the safe time, so that a claim that could not be
		// renewed is given up then, not a retry interval later.
		select {
		case <-l.quit:
			return
		case <-time.After(max(min(wait, l.safeLeft()), 0)):
		}
		left := l.safeLeft()
		if left <= 0 {
			l.mu.Lock()
			l.loseLocked(fmt.Errorf("%w: not renewed for %v", ErrLost, l.s.opts.Now().Sub(l.sentOK).Round(time.Millisecond)))
			l.mu.Unlock()
			return
		}
		// Bounded so that a store that does not answer loses the claim in time.
		ctx, cancel := context.WithTimeout(context.Background(), min(l.every, left))
		err := l.renew(ctx)
		cancel()
		switch {
		case errors.Is(err, ErrLost):
			return
		case err != nil:
			wait = l.every / 4 // try again soon: the lease runs out
		default:
			wait = l.every
		}
	}
}

// safeLeft is how long the claim is surely still this runall's.
func (l *Lease) safeLeft() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.safeFor() - l.s.opts.Now().Sub(l.sentOK)
}

// renew rewrites the claim, conditional on its last ETag. A failure other than a lost
// condition loses the claim only once the lease is no longer surely held.
func (l *Lease) renew(ctx context.Context) error {
	if err := l.Err(); err != nil {
		return err
	}
	sent := l.s.opts.Now()
	token := l.s.w.token()
	l.mu.Lock()
	etag := l.etag
	l.mu.Unlock()
	next, err := l.s.w.put(ctx, claimDir+l.key+".json", l.s.w.claimBody(token), s3sync.Condition{IfMatch: etag}, token)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.etag, l.sentOK = next, sent
		return nil
	case errors.Is(err, s3sync.ErrPrecondition):
		l.loseLocked(fmt.Errorf("%w: another runall took it over", ErrLost))
	case l.s.opts.Now().Sub(l.sentOK) >= l.safeFor():
		l.loseLocked(fmt.Errorf("%w: not renewed for %v: %w", ErrLost, l.s.opts.Now().Sub(l.sentOK).Round(time.Second), err))
	default:
		return err // try again at the next tick
	}
	return l.err
}

func (l *Lease) loseLocked(err error) {
	if l.err == nil {
		l.err = err
		close(l.lost)
	}
}

// stop ends the renewals.
func (l *Lease) stop() {
	l.once.Do(func() { close(l.quit) })
	<-l.ended
}

// Finish records the trial as done once the claim is known to be held: within the safe
// time of the last renewal, or by a new one. A store that fails is tried again until ctx
// ends or the claim is lost: a trial that ran must not be left unrecorded for another to
// run again. It returns ErrLost when the claim was lost (nothing is recorded), and ErrDone
// when another runall recorded the trial first.
func (l *Lease) Finish(ctx context.Context, rec Record) error {
	l.stop()
	rec.Key, rec.Owner, rec.Token = l.key, l.s.opts.Owner, l.s.w.token()
	if rec.FinishedAt.IsZero() {
		rec.FinishedAt = l.s.opts.Now().UTC()
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	for {
		// Within the safe time the claim is surely still ours (others wait a whole lease from
		// the last renewal they saw); after it, a renewal must prove it.
		err := l.Err()
		if err == nil && l.safeLeft() <= 0 {
			err = l.renew(ctx)
		}
		if err == nil {
			_, err = l.s.w.put(ctx, doneDir+l.key+".json", body, s3sync.Condition{IfNoneMatch: true}, rec.Token)
		}
		switch {
		case err == nil:
			l.s.mu.Lock()
			l.s.done[l.key], l.s.records[l.key] = true, &rec
			l.s.mu.Unlock()
			return nil
		case errors.Is(err, ErrLost):
			return err
		case errors.Is(err, s3sync.ErrPrecondition):
			l.s.markDone(l.key)
			return fmt.Errorf("%w by another runall", ErrDone)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-time.After(l.every / 4):
		}
	}
}

// Release gives the claim up without recording the trial, so that another runall may take
// it at once (this one was stopped): it deletes the claim, which is safe while the claim is
// surely still held. Failing that, the claim expires after the lease.
func (l *Lease) Release(ctx context.Context) {
	l.stop()
	if l.Err() == nil && l.safeLeft() > 0 {
		_ = l.s.store.Delete(ctx, claimDir+l.key+".json")
	}
}
