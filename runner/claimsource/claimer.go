package claimsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// DefaultLease is how long a claim holds without renewal (--lease).
const DefaultLease = 60 * time.Second

// MinLease is the shortest lease --lease accepts: renewals every third of it must fit
// in it, with the requests they make.
const MinLease = time.Second

// Claimer is a run's side of a sweep shared through claims (--claims): every runall with
// the same prefix and task file takes its trials from one queue.
type Claimer struct {
	sweep *claims.Sweep
	where string                // the prefix, for messages
	keys  map[*plan.Task]string // each trial's key in the queue
	order []string              // the keys in plan order

	leases *heldClaims // the claims this runall holds
	tally  *tally      // the records read for the sweep's figures (figures.go)

	mu     sync.Mutex
	view   claims.View // the queue as last listed
	viewAt time.Time   // when
	failed bool        // a trial of the sweep failed, as its records say (here: the run's)

	o Options
}

// Options is what the claims take from the run when they are made.
type Options struct {
	Run     Run
	Plan    *plan.Plan
	RunID   string
	Lease   time.Duration     // how long a claim holds without renewal; 0: DefaultLease
	Running *executor.Running // stops a trial whose claim was lost
	Grace   time.Duration
	Key     func(*plan.Task) string  // a trial's key in the queue (its resume marker's name)
	Learned func() map[string]uint64 // learned GPU needs, for a trial's record
	Mask    Masker                   // a trial's record passes it
	// Objective and Objectives are config objective as the results record it, for a
	// trial's record and the merged results.
	Objective  *results.Objective
	Objectives []results.Objective
}

// Run is what the claims tell the run and ask of it.
type Run interface {
	Say(line string) // a status line
	Emit(ev event.Event)
	Skip(t *plan.Task, why string)          // a trial done elsewhere
	SkipAll(tasks []*plan.Task, why string) // everything: the sweep was done before it began
	Halted() bool
	StoppedBy() syscall.Signal // the signal that stopped the run; 0: none
	// GivesBack is why the run gives the trials it stops back to the sweep, as a signal
	// does (every GPU here is out of service); "" when it does not.
	GivesBack() string
	// Results is the results of trial's commands as the run records them, log files named.
	Results(trial *plan.Task) []results.Task
}

// Masker masks every string v holds (mask.Masker.All): the results' gate.
type Masker interface {
	All(v any)
}

// trialKeys names every trial of the plan in the queue, in plan order, by its identity
// (Task.Key, unique in the plan, as resume markers and history name it), and hashes what
// decides them: a file whose trials differ in anything that changes what one does (the
// Key: runner/plan/identity.go) is another sweep.
func trialKeys(p *plan.Plan, trialKey func(*plan.Task) string) (map[*plan.Task]string, []string, string) {
	keys := map[*plan.Task]string{}
	var order []string
	h := sha256.New()
	for _, t := range p.Trials() {
		key := trialKey(t)
		keys[t] = key
		order = append(order, key)
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", key, t.Name, t.Cmd)
	}
	return keys, order, hex.EncodeToString(h.Sum(nil))[:16]
}

// Open joins the sweep the run takes its trials from: the queue under prefix where
// (--claims), through store. It reports whether every trial was already done.
func Open(ctx context.Context, store claims.Store, where string, o Options) (c *Claimer, complete bool, err error) {
	keys, order, hash := trialKeys(o.Plan, o.Key)
	host, _ := os.Hostname()
	lease := o.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	store = claims.Timed(store, requestTimeout(lease))
	sweep, err := joinSweep(ctx, store, where, o.Run, claims.Options{
		Identity: claims.Identity{Hash: hash, File: o.Plan.File, Trials: len(order)},
		Owner:    claims.Owner{Host: host, PID: os.Getpid(), RunID: o.RunID},
		Lease:    lease,
	})
	if err != nil {
		return nil, false, fmt.Errorf("claims %s: %w", where, err)
	}
	view, err := sweep.Refresh(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("claims %s: %w", where, err)
	}
	c = &Claimer{sweep: sweep, where: where, keys: keys, order: order, o: o, tally: &tally{},
		leases: &heldClaims{sweep: sweep, run: o.Run, running: o.Running, grace: o.Grace, held: map[*plan.Task]*trialLease{}}}
	for _, k := range order {
		if !view.Done[k] {
			return c, false, nil
		}
	}
	return c, true, nil
}

// requestTimeout bounds each request to the claims store: a third of the lease (a claim is
// renewed that often), and no less than 10 s, which a store under load may take.
func requestTimeout(lease time.Duration) time.Duration { return max(lease/3, 10*time.Second) }

// joinSweep joins the sweep, trying again while the store cannot be reached (and saying so,
// once per different error), until ctx ends: a stop. Another file's sweep, a sweep.json
// that is not runall's, or another lease than the sweep's is no reason to try again.
func joinSweep(ctx context.Context, store claims.Store, where string, run Run, o claims.Options) (*claims.Sweep, error) {
	said := ""
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		sweep, err := claims.Open(ctx, store, o)
		if err == nil || errors.Is(err, claims.ErrOtherSweep) || errors.Is(err, claims.ErrLeaseDiffers) || ctx.Err() != nil {
			return sweep, err
		}
		if msg := fmt.Sprintf("claims %s: %v (trying again)", where, err); msg != said {
			run.Say(msg)
			said = msg
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (stopped while trying)", err)
		case <-time.After(wait):
		}
	}
}

// refresh lists the queue, and keeps the listing for takenElsewhere.
func (c *Claimer) refresh(ctx context.Context) (claims.View, error) {
	v, err := c.sweep.Refresh(ctx)
	if err == nil {
		c.mu.Lock()
		c.view, c.viewAt = v, time.Now()
		c.mu.Unlock()
	}
	return v, err
}

// refreshStale lists the queue again unless it was listed a moment ago: one listing serves
// the trials tried at about the same time.
func (c *Claimer) refreshStale(ctx context.Context) {
	c.refreshOlder(ctx, 250*time.Millisecond)
}

// refreshOlder lists the queue again when its last listing is older than age.
func (c *Claimer) refreshOlder(ctx context.Context, age time.Duration) {
	c.mu.Lock()
	recent := time.Since(c.viewAt) < age
	c.mu.Unlock()
	if !recent {
		_, _ = c.refresh(ctx) // a failure only leaves the older listing
	}
}

// takenElsewhere reports whether the last listing shows t done, or claimed by another
// runall and not stale.
func (c *Claimer) takenElsewhere(t *plan.Task) bool {
	if c.leases.holds(t) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := c.keys[t]
	return c.view.Done[key] || c.view.Claimed[key] && !c.sweep.Stale(key)
}

// Store is the sweep's store, where early stopping keeps its values and rounds their board
// under the prefix.
func (c *Claimer) Store() claims.Store { return c.sweep.Store() }

// ReleaseAll gives back the claims this runall still holds: the run's trials are over (it
// was stopped, or trials it requeued never started again).
func (c *Claimer) ReleaseAll() { c.leases.releaseAll() }
