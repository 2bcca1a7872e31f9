package claimsource

import (
	"context"
	"sync"
	"time"

	"github.com/runall/runall/runner/results"
)

// Figures are a claims sweep's progress as its store holds it, whichever runall ran what: what
// every runall of the sweep may publish alike (the Pod's annotations, Kubeflow Trainer's
// status).
type Figures struct {
	Done    int // trials with a record, from any runall (failed ones too)
	Running int // trials claimed and not done, under a live claim (held here, or renewed elsewhere within a lease)
	Waiting int // the others: not started, given back, or under a claim gone a lease without renewal
	// Best is the best trial over every record by the objective (Objective); HasBest is
	// false when no record holds a trial that succeeded with a value of it.
	Best      results.Task
	HasBest   bool
	Objective *results.Objective
	Since     time.Time // the earliest start a record holds: the sweep's; zero before the first record
}

// tally folds the sweep's records into its best trial and its start, each record once:
// a record is written once and read once (claims.Sweep.Records keeps what it read, which
// the sweep's conclusion reads again for free).
type tally struct {
	mu    sync.Mutex
	seen  map[string]bool
	best  results.Task
	has   bool
	since time.Time
}

// Figures are the sweep's figures now: the counts from the queue as last listed, listed
// again only when that listing is older than fresh (the Source lists it every poll while
// it looks for trials; a runall busy with its own may not for long), the best trial and the
// sweep's start from the records done since the last call, each read once.
func (c *Claimer) Figures(ctx context.Context, fresh time.Duration) Figures {
	c.refreshOlder(ctx, fresh)
	c.mu.Lock()
	view := c.view
	c.mu.Unlock()
	f := Figures{Objective: c.o.Objective}
	var done []string
	for t, key := range c.keys {
		switch {
		case view.Done[key]:
			f.Done++
			done = append(done, key)
		case c.leases.holds(t) || view.Claimed[key] && !c.sweep.Stale(key):
			f.Running++
		default:
			f.Waiting++
		}
	}
	f.Best, f.HasBest, f.Since = c.tally.fold(ctx, c, done)
	return f
}

// fold reads the records of the trials in done not read yet, and returns the best trial
// and the earliest start over every record read. A record that cannot be read now is tried
// again at the next call; one that is not runall's is left out (the sweep's conclusion
// names it).
func (tl *tally) fold(ctx context.Context, c *Claimer, done []string) (results.Task, bool, time.Time) {
	tl.mu.Lock() // held through the reads: two callers at once read each record once
	defer tl.mu.Unlock()
	if tl.seen == nil {
		tl.seen = map[string]bool{}
	}
	for _, key := range done {
		if tl.seen[key] {
			continue
		}
		recs, err := c.sweep.Records(ctx, []string{key})
		if err != nil {
			continue
		}
		tl.seen[key] = true
		for _, rec := range recs {
			part, err := recordedPart(rec)
			if err != nil {
				continue
			}
			tl.since = earliest(tl.since, part.StartedAt)
			cands := part.Tasks
			if tl.has {
				cands = append([]results.Task{tl.best}, cands...)
			}
			if b, ok := c.o.Objective.BestTask(cands); ok {
				tl.best, tl.has = b, true
			}
		}
	}
	return tl.best, tl.has, tl.since
}
