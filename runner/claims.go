package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/s3sync"
)

// DefaultLease is how long a claim holds without renewal (--lease).
const DefaultLease = 60 * time.Second

// MinLease is the shortest lease --lease accepts: renewals every third of it must fit
// in it, with the requests they make.
const MinLease = time.Second

// claimer is a run's side of a sweep shared through claims (--claims): every runall with
// the same prefix and task file takes its trials from one queue.
type claimer struct {
	sweep *claims.Sweep
	where string                // the prefix, for messages
	keys  map[*plan.Task]string // each trial's key in the queue
	order []string              // the keys in plan order

	mu      sync.Mutex
	view    claims.View                // the queue as last listed
	viewAt  time.Time                  // when
	held    map[*plan.Task]*trialLease // claims this runall holds
	claimed map[*plan.Task]bool        // trials this runall claimed at some point
	failed  bool                       // a trial of the sweep failed, here or elsewhere
}

// trialKeys names every trial of the plan, in plan order, and hashes what decides them:
// a file whose trials differ is another sweep.
func trialKeys(p *plan.Plan) (map[*plan.Task]string, []string, string) {
	keys := map[*plan.Task]string{}
	var order []string
	seen := map[string]int{}
	h := sha256.New()
	for _, b := range p.Tasks {
		for _, t := range b.Parallel {
			sum := sha256.Sum256([]byte(t.Name + "\x00" + t.Cmd))
			key := plan.Slug(t.Name) + "-" + hex.EncodeToString(sum[:6])
			if seen[key]++; seen[key] > 1 {
				key += "-" + strconv.Itoa(seen[key]) // the same trial twice: both run
			}
			keys[t] = key
			order = append(order, key)
			fmt.Fprintf(h, "%s\x00%s\x00%s\n", key, t.Name, t.Cmd)
		}
	}
	return keys, order, hex.EncodeToString(h.Sum(nil))[:16]
}

// openClaims joins the sweep when the run takes its trials from claims. It reports whether
// every trial was already done.
func (r *run) openClaims(ctx context.Context) (complete bool, err error) {
	if r.opts.Claims == "" && r.opts.ClaimStore == nil {
		return false, nil
	}
	store, where := r.opts.ClaimStore, r.opts.Claims
	if store == nil {
		if store, err = r.claimStoreS3(ctx); err != nil {
			return false, err
		}
	}
	keys, order, hash := trialKeys(r.plan)
	host, _ := os.Hostname()
	lease := r.opts.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	sweep, err := claims.Open(ctx, store, claims.Options{
		Identity: claims.Identity{Hash: hash, File: r.plan.File, Trials: len(order)},
		Owner:    claims.Owner{Host: host, PID: os.Getpid(), RunID: r.id},
		Lease:    lease,
	})
	if err != nil {
		return false, fmt.Errorf("claims %s: %w", where, err)
	}
	r.claims = &claimer{sweep: sweep, where: where, keys: keys, order: order, held: map[*plan.Task]*trialLease{}, claimed: map[*plan.Task]bool{}}
	view, err := sweep.Refresh(ctx)
	if err != nil {
		return false, fmt.Errorf("claims %s: %w", where, err)
	}
	for _, k := range order {
		if !view.Done[k] {
			return false, nil
		}
	}
	return true, nil
}

// claimStoreS3 reaches the claims prefix with the task file's S3 settings.
func (r *run) claimStoreS3(ctx context.Context) (claims.Store, error) {
	spec := plan.S3Spec{}
	if r.plan.S3 != nil {
		spec = *r.plan.S3
	}
	lookup := getenv(r.baseEnv())
	client, err := s3sync.NewClient(ctx, s3sync.ClientOptions{
		Endpoint: os.Expand(spec.Endpoint, lookup), Region: os.Expand(spec.Region, lookup), Getenv: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	return claims.NewS3(client, r.opts.Claims)
}

// runParallel runs a parallel block: all of it, or with claims, the trials this runall
// claims as the admitter makes room for them.
func (r *run) runParallel(ctx context.Context, b *plan.Task, env []string) {
	if r.claims == nil {
		r.runBlock(ctx, b, env)
		return
	}
	r.runClaimedBlock(ctx, b, env)
}

// runClaimedBlock offers the scheduler the block's trials that nobody holds, again and
// again, until every trial is done: here, elsewhere, or here after its claim expired
// elsewhere. Waiting for others' trials is what lets a trial whose Pod died be taken over.
func (r *run) runClaimedBlock(ctx context.Context, b *plan.Task, env []string) {
	c := r.claims
	defer c.releaseAll()
	// How soon a runall that waits on others sees the sweep end, or a claim expire: a second
	// at most, two LIST requests each time.
	poll := min(max(c.sweep.Lease()/10, 100*time.Millisecond), time.Second)
	said := ""
	for !r.isHalted() && ctx.Err() == nil {
		view, err := c.refresh(ctx)
		if err != nil {
			if msg := "claims: " + err.Error() + " (trying again)"; msg != said {
				r.emit(event.Event{Kind: event.RunStatus, Line: msg})
				said = msg
			}
			sleepCtx(ctx, poll)
			continue
		}
		said = ""
		var open []*plan.Task
		left := 0
		for _, t := range b.Parallel {
			key := c.keys[t]
			if view.Done[key] {
				r.skip(t, "done by another runall of the sweep ("+c.where+")")
				continue
			}
			left++
			if !view.Claimed[key] || c.sweep.Stale(key) || c.holds(t) {
				open = append(open, t)
			}
		}
		if left == 0 {
			return
		}
		if len(open) == 0 {
			sleepCtx(ctx, poll)
			continue
		}
		sub := *b
		sub.Parallel = open
		r.runBlock(ctx, &sub, env)
		if !c.claimedAny(open) {
			sleepCtx(ctx, poll) // all taken by others meanwhile: wait before looking again
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// startTrial runs a trial the admitter placed. With claims it first claims it; a trial
// another runall holds or finished is given back untouched.
func (r *run) startTrial(ctx context.Context, t *plan.Task, env []string, p *admit.Placement) trialDone {
	if r.claims == nil {
		return r.runTrial(ctx, t, env, p)
	}
	if r.claims.takenElsewhere(t) {
		return trialDone{task: t, p: p} // no request for what the last listing says is taken
	}
	tl, err := r.claims.hold(ctx, t)
	if err != nil {
		if errors.Is(err, claims.ErrTaken) {
			r.claims.refreshStale(ctx) // the block's list is behind: skip what others took since
		} else if !errors.Is(err, claims.ErrDone) {
			r.emit(event.Event{Kind: event.RunStatus, Line: fmt.Sprintf("claims: %s: %v (trying again)", t.Name, err)})
		}
		return trialDone{task: t, p: p}
	}
	stop := tl.stopWhenLost(r, t)
	d := r.runTrial(context.WithValue(ctx, trialLeaseKey{}, tl), t, env, p)
	stop()
	if d.oom {
		return d // it goes again here, still claimed
	}
	r.claims.finish(ctx, r, t, tl)
	return d
}

// refresh lists the queue, and keeps the listing for takenElsewhere.
func (c *claimer) refresh(ctx context.Context) (claims.View, error) {
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
func (c *claimer) refreshStale(ctx context.Context) {
	c.mu.Lock()
	recent := time.Since(c.viewAt) < 250*time.Millisecond
	c.mu.Unlock()
	if !recent {
		_, _ = c.refresh(ctx) // a failure only leaves the older listing
	}
}

// takenElsewhere reports whether the last listing shows t done, or claimed by another
// runall and not stale.
func (c *claimer) takenElsewhere(t *plan.Task) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := c.keys[t]
	if c.held[t] != nil {
		return false
	}
	return c.view.Done[key] || c.view.Claimed[key] && !c.sweep.Stale(key)
}

// holds reports whether this runall holds t's claim (a trial requeued after running out
// of GPU memory keeps it).
func (c *claimer) holds(t *plan.Task) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[t] != nil
}

// claimedAny reports whether this runall claimed any of ts.
func (c *claimer) claimedAny(ts []*plan.Task) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range ts {
		if c.claimed[t] {
			return true
		}
	}
	return false
}

// hold returns t's claim, claiming it now unless this runall already holds it.
func (c *claimer) hold(ctx context.Context, t *plan.Task) (*trialLease, error) {
	c.mu.Lock()
	tl := c.held[t]
	c.mu.Unlock()
	if tl != nil {
		if err := tl.lease.Err(); err != nil {
			c.drop(t)
			return nil, err
		}
		return tl, nil
	}
	l, err := c.sweep.Claim(ctx, c.keys[t])
	if err != nil {
		return nil, err
	}
	tl = &trialLease{lease: l, pgids: map[int]bool{}}
	c.mu.Lock()
	c.held[t], c.claimed[t] = tl, true
	c.mu.Unlock()
	return tl, nil
}

func (c *claimer) drop(t *plan.Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, t)
}

// releaseAll gives back the claims this runall still holds: it was stopped, or trials it
// requeued never started again.
func (c *claimer) releaseAll() {
	c.mu.Lock()
	held := c.held
	c.held = map[*plan.Task]*trialLease{}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tl := range held {
		tl.lease.Release(ctx)
	}
}

// trialLease is a claim this runall holds, and the process groups of its trial's commands,
// which are stopped should the claim be lost.
type trialLease struct {
	lease *claims.Lease

	mu    sync.Mutex
	pgids map[int]bool
	lost  bool
}

type trialLeaseKey struct{}

// started ties a command's process group to the trial; one that starts after the claim was
// lost is stopped at once.
func (tl *trialLease) started(pgid int, procs *proc.Table, grace time.Duration) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.pgids[pgid] = true
	if tl.lost {
		procs.Terminate(pgid, grace)
	}
}

// killWait is how long a trial whose claim was lost has between SIGTERM and SIGKILL: --grace,
// but no more than the twelfth of the lease left before another runall may take it over.
func (tl *trialLease) killWait(r *run) time.Duration {
	return min(r.opts.Grace, r.claims.sweep.Lease()/12)
}

// stopWhenLost stops the trial's commands if the claim is lost while it runs.
func (tl *trialLease) stopWhenLost(r *run, t *plan.Task) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-done:
		case <-tl.lease.Lost():
			r.emit(event.Event{Kind: event.RunStatus, Line: fmt.Sprintf("%s: %v: stopping it", t.Name, tl.lease.Err())})
			tl.mu.Lock()
			tl.lost = true
			for pgid := range tl.pgids {
				r.procs.Terminate(pgid, tl.killWait(r))
			}
			tl.mu.Unlock()
		}
	}()
	return func() { close(done); wg.Wait() }
}

// onStart is told each command's process group: the admitter ties it to its placement, and
// a claimed trial's lease stops it should the claim be lost.
func (r *run) onStart(ctx context.Context, p *admit.Placement) func(pgid int) {
	tl, _ := ctx.Value(trialLeaseKey{}).(*trialLease)
	if p == nil && tl == nil {
		return nil
	}
	return func(pgid int) {
		if p != nil {
			r.admit.Started(p, pgid)
		}
		if tl != nil {
			tl.started(pgid, r.procs, tl.killWait(r))
		}
	}
}
