package claimsource

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/claims"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/order"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/sched"
)

// Source is a parallel block's trials as the claims queue hands them out: the ones
// nobody holds, again and again, until every trial is done here, elsewhere, or here after
// its claim expired elsewhere. Waiting for others' trials is what lets a trial whose Pod died
// be taken over. A trial is claimed as it starts (Start) and recorded as it ends (Ended).
type Source struct {
	c      *Claimer
	b      *plan.Task
	trials []*plan.Task  // b's, in the order they are offered: order: shuffled's, else file order
	poll   time.Duration // how soon a runall that waits on others looks again
	said   string        // the last listing error told

	mu       sync.Mutex
	offered  map[*plan.Task]bool // lined up or running here
	heldSaid map[*plan.Task]bool // held elsewhere while this runall waited, and said so (wait.go)
	handed   map[*plan.Task]int  // paused trials handed back to the sweep: their attempts here
	tick     chan struct{}       // Ready's, closed at the next poll
}

// Source is b's trials through the claims queue: the run's sched.Source for the block.
func (c *Claimer) Source(b *plan.Task) *Source {
	// How soon a runall that waits on others sees the sweep end, or a claim expire: a second
	// at most, two LIST requests each time.
	poll := min(max(c.sweep.Lease()/10, 100*time.Millisecond), time.Second)
	// Recorded durations differ from Pod to Pod: only an order every runall draws the same
	// (shuffled, file) is kept here.
	return &Source{c: c, b: b, trials: order.Trials(b, b.Parallel, nil), poll: poll,
		offered: map[*plan.Task]bool{}, handed: map[*plan.Task]int{}, heldSaid: map[*plan.Task]bool{}}
}

// Next lists the queue and offers the trials nobody else holds.
func (s *Source) Next(ctx context.Context, _ int) ([]*sched.Trial, bool) {
	c, life := s.c, s.c.o.Run
	if life.Halted() || ctx.Err() != nil {
		return nil, false
	}
	view, err := c.refresh(ctx)
	if err != nil {
		if msg := "claims: " + err.Error() + " (trying again)"; msg != s.said {
			life.Say(msg)
			s.said = msg
		}
		return nil, true
	}
	s.said = ""
	open, held, left := s.open(view)
	if len(held) > 0 {
		s.sayHeld(ctx, held)
	}
	return open, left > 0
}

// open is what the listing leaves to offer now, the trials this runall waits on while
// others hold them (when it has nothing of its own to run), and how many are not done.
func (s *Source) open(view claims.View) (open []*sched.Trial, held []*plan.Task, left int) {
	c, life := s.c, s.c.o.Run
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.trials {
		key := c.keys[t]
		if view.Done[key] {
			why := "done by another runall of the sweep (" + c.where + ")"
			if _, handed := s.handed[t]; handed {
				why = "paused here, then resumed and ended by another runall of the sweep (" + c.where + ")"
				delete(s.handed, t)
			}
			life.Skip(t, why)
			continue
		}
		left++
		if !s.offered[t] && (!view.Claimed[key] || c.sweep.Stale(key) || c.leases.holds(t)) {
			s.offered[t] = true
			open = append(open, &sched.Trial{Task: t, Attempt: s.handed[t]})
		} else if !s.offered[t] && !s.heldSaid[t] {
			held = append(held, t)
		}
	}
	if len(open) > 0 || len(s.offered) > 0 {
		held = nil // not waiting on others yet: this runall has its own to run
	}
	return open, held, left
}

// Ready is closed at the next poll: others' trials may have ended, started or expired. Asked
// again before then, it is the same channel, so that a scheduler woken often (by GPU
// memory readings) still looks at the queue every poll.
func (s *Source) Ready() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tick == nil {
		ch := make(chan struct{})
		s.tick = ch
		time.AfterFunc(s.poll, func() {
			s.mu.Lock()
			s.tick = nil
			s.mu.Unlock()
			close(ch)
		})
	}
	return s.tick
}

// Start claims the trial; a trial another runall holds or finished is given back untouched.
func (s *Source) Start(ctx context.Context, tr *sched.Trial) bool {
	c, t := s.c, tr.Task
	if c.takenElsewhere(t) {
		s.giveBack(t) // no request for what the last listing says is taken
		return false
	}
	if _, err := c.leases.hold(ctx, t, c.keys[t]); err != nil { // a claim lost from now on stops the trial, even before it runs
		if errors.Is(err, claims.ErrTaken) {
			c.refreshStale(ctx) // the block's list is behind: skip what others took since
		} else if !errors.Is(err, claims.ErrDone) && !errors.Is(err, claims.ErrLost) { // a lost claim was said as it was lost
			c.o.Run.Say(fmt.Sprintf("claims: %s: %v (trying again)", t.Name, err))
		}
		s.giveBack(t)
		return false
	}
	return true
}

// Ended records the trial's end for the whole sweep.
func (s *Source) Ended(ctx context.Context, tr *sched.Trial, _ sched.Outcome) {
	s.c.record(ctx, tr.Task)
	s.mu.Lock()
	delete(s.handed, tr.Task)
	s.mu.Unlock()
	s.giveBack(tr.Task)
}

// HandOver gives paused trial tr back to the sweep as its round resumes it: its claim is
// released, so that whichever runall of the sweep has room first (this one included) claims
// it and resumes it from its checkpoint, which is kept under the prefix.
func (s *Source) HandOver(ctx context.Context, tr *sched.Trial) {
	t := tr.Task
	s.mu.Lock()
	s.handed[t] = tr.Attempt
	s.mu.Unlock()
	s.c.leases.release(ctx, t)
	s.giveBack(t) // after the release: until then the listing shows it held here
	s.c.o.Run.Emit(event.Event{Kind: event.RunStatus, Task: t,
		Line: t.Name + ": resumed: its claim is given back for whichever runall of the sweep has room first"})
}

// Withdrawn is the trials of waiting (lined up here, without room yet) that another runall
// started or finished meanwhile: they leave this runall's line, and are offered again only
// should that runall's claim expire. The queue is listed for it every ten polls at most
// (10 s): a runall whose trials wait for room should not list it every second.
func (s *Source) Withdrawn(ctx context.Context, waiting []*sched.Trial) []*sched.Trial {
	s.c.refreshOlder(ctx, 10*s.poll)
	var gone []*sched.Trial
	for _, tr := range waiting {
		if s.c.takenElsewhere(tr.Task) {
			s.giveBack(tr.Task)
			gone = append(gone, tr)
		}
	}
	return gone
}

func (s *Source) giveBack(t *plan.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.offered, t)
}
