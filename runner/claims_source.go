package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/sched"
)

// claimSource is a parallel block's trials as the claims queue hands them out: the ones
// nobody holds, again and again, until every trial is done here, elsewhere, or here after
// its claim expired elsewhere. Waiting for others' trials is what lets a trial whose Pod died
// be taken over. A trial is claimed as it starts (Start) and recorded as it ends (Ended).
type claimSource struct {
	c    *claimer
	b    *plan.Task
	poll time.Duration // how soon a runall that waits on others looks again
	said string        // the last listing error told

	mu      sync.Mutex
	offered map[*plan.Task]bool // lined up or running here
}

// source is b's trials through the claims queue.
func (c *claimer) source(b *plan.Task) *claimSource {
	// How soon a runall that waits on others sees the sweep end, or a claim expire: a second
	// at most, two LIST requests each time.
	poll := min(max(c.sweep.Lease()/10, 100*time.Millisecond), time.Second)
	return &claimSource{c: c, b: b, poll: poll, offered: map[*plan.Task]bool{}}
}

// Next lists the queue and offers the trials nobody else holds.
func (s *claimSource) Next(ctx context.Context, _ int) ([]*sched.Trial, bool) {
	c, life := s.c, s.c.o.life
	if life.halted() || ctx.Err() != nil {
		return nil, false
	}
	view, err := c.refresh(ctx)
	if err != nil {
		if msg := "claims: " + err.Error() + " (trying again)"; msg != s.said {
			life.say(msg)
			s.said = msg
		}
		return nil, true
	}
	s.said = ""
	s.mu.Lock()
	defer s.mu.Unlock()
	var open []*sched.Trial
	left := 0
	for _, t := range s.b.Parallel {
		key := c.keys[t]
		if view.Done[key] {
			life.skip(t, "done by another runall of the sweep ("+c.where+")")
			continue
		}
		left++
		if !s.offered[t] && (!view.Claimed[key] || c.sweep.Stale(key) || c.leases.holds(t)) {
			s.offered[t] = true
			open = append(open, &sched.Trial{Task: t})
		}
	}
	return open, left > 0
}

// Ready is closed after the poll interval: others' trials may have ended or expired.
func (s *claimSource) Ready() <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(s.poll, func() { close(ch) })
	return ch
}

// Start claims the trial; a trial another runall holds or finished is given back untouched.
func (s *claimSource) Start(ctx context.Context, tr *sched.Trial) bool {
	c, t := s.c, tr.Task
	if c.takenElsewhere(t) {
		s.giveBack(t) // no request for what the last listing says is taken
		return false
	}
	if _, err := c.leases.hold(ctx, t, c.keys[t]); err != nil { // a claim lost from now on stops the trial, even before it runs
		if errors.Is(err, claims.ErrTaken) {
			c.refreshStale(ctx) // the block's list is behind: skip what others took since
		} else if !errors.Is(err, claims.ErrDone) {
			c.o.life.say(fmt.Sprintf("claims: %s: %v (trying again)", t.Name, err))
		}
		s.giveBack(t)
		return false
	}
	return true
}

// Ended records the trial's end for the whole sweep.
func (s *claimSource) Ended(ctx context.Context, tr *sched.Trial, _ sched.Outcome) {
	s.c.record(ctx, tr.Task)
	s.giveBack(tr.Task)
}

func (s *claimSource) giveBack(t *plan.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.offered, t)
}
