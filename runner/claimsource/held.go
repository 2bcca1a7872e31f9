package claimsource

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// heldClaims are the claims this runall holds, each watched while it holds it: should one
// be lost, its trial is stopped wherever it is.
type heldClaims struct {
	sweep   *claims.Sweep
	run     Run
	running *executor.Running // stops a trial whose claim was lost
	grace   time.Duration

	mu   sync.Mutex
	held map[*plan.Task]*trialLease
}

// trialLease is a claim this runall holds; done closes when it is no longer watched.
type trialLease struct {
	lease *claims.Lease
	done  chan struct{}
}

// holds reports whether this runall holds t's claim (a trial requeued after running out
// of GPU memory keeps it).
func (c *heldClaims) holds(t *plan.Task) bool {
	return c.get(t) != nil
}

// get is t's claim, nil when this runall holds none.
func (c *heldClaims) get(t *plan.Task) *trialLease {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[t]
}

// hold returns t's claim, claiming it (by its key in the queue) now unless this runall
// already holds it. A new claim is watched: should it be lost, the trial is stopped
// wherever it is.
func (c *heldClaims) hold(ctx context.Context, t *plan.Task, key string) (*trialLease, error) {
	if tl := c.get(t); tl != nil {
		if err := tl.lease.Err(); err != nil {
			c.drop(t)
			return nil, err
		}
		return tl, nil
	}
	l, err := c.sweep.Claim(ctx, key)
	if err != nil {
		return nil, err
	}
	tl := &trialLease{lease: l, done: make(chan struct{})}
	c.mu.Lock()
	c.held[t] = tl
	c.mu.Unlock()
	go c.watch(t, tl)
	return tl, nil
}

// drop forgets t's claim and stops watching it.
func (c *heldClaims) drop(t *plan.Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tl := c.held[t]; tl != nil {
		close(tl.done)
		delete(c.held, t)
	}
	c.running.Forget(t)
}

// release gives back t's claim at once, held here no more: its trial is handed to the sweep.
func (c *heldClaims) release(ctx context.Context, t *plan.Task) {
	tl := c.get(t)
	if tl == nil {
		return
	}
	c.drop(t)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	tl.lease.Release(ctx)
}

// releaseAll gives back the claims this runall still holds: it was stopped, or trials it
// requeued never started again.
func (c *heldClaims) releaseAll() {
	c.mu.Lock()
	held := c.held
	c.held = map[*plan.Task]*trialLease{}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for t, tl := range held {
		close(tl.done)
		c.running.Forget(t)
		tl.lease.Release(ctx)
	}
}

// watch stops t's commands if its claim is lost while this runall holds it: SIGTERM, and
// SIGKILL after --grace but no more than the twelfth of the lease left before another
// runall may take it over. A trial that starts after the loss is stopped as it starts. It
// is not the trial's failure: its attempt is classed preempted and it goes back to the line
// (results.StatusPending), where it is dropped as it would start again (Source.Start: the
// claim is lost); whichever runall claims it next, this one included once the claim has
// expired, runs it (from its checkpoint, where it keeps one).
func (c *heldClaims) watch(t *plan.Task, tl *trialLease) {
	select {
	case <-tl.done:
	case <-tl.lease.Lost():
		c.run.Say(fmt.Sprintf("%s: %v: stopping it; whoever claims it next runs it", t.Name, tl.lease.Err()))
		c.running.StopAtStart(t, executor.Stop{Status: results.StatusPending, Reason: tl.lease.Err().Error()},
			min(c.grace, c.sweep.Lease()/12))
	}
}
