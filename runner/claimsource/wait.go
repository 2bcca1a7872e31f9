package claimsource

import (
	"context"
	"fmt"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
)

// sayHeld says of each trial this runall waits on while another runall holds it why it
// waits (a TaskWaiting event, as the scheduler's waits are: the output, the live view, the
// page and /api/run show it): by whom, until when unless renewed, and what of its claim is
// not trusted (a lease longer than the sweep's, a renewal dated in the future), once per
// trial. Without it a runall that waits shows only its count of trials done. One GET per
// trial; one that fails is tried again at the next poll.
func (s *Source) sayHeld(ctx context.Context, held []*plan.Task) {
	for _, t := range held {
		h, err := s.c.sweep.Holder(ctx, s.c.keys[t])
		if err != nil {
			continue // gone or unreachable since the listing: the next one tells
		}
		if h.Mine {
			continue // taken over here since the listing (it went stale): nothing to wait on
		}
		s.mu.Lock()
		s.heldSaid[t] = true
		s.mu.Unlock()
		s.c.o.Run.Emit(event.Event{Kind: event.TaskWaiting, Task: t,
			Reason: fmt.Sprintf("another runall's claim under %s: %s", s.c.where, h)})
	}
}
