package claimsource

import (
	"context"
	"fmt"

	"github.com/runall/runall/runner/plan"
)

// sayHeld names each trial this runall waits on while another runall holds it: by whom,
// until when unless renewed, and what of its claim is not trusted (a lease longer than the
// sweep's, a renewal dated in the future), once per trial. Without it a runall that waits
// shows only its count of trials done. One GET per trial; one that fails is tried again at
// the next poll.
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
		s.c.o.Run.Say(fmt.Sprintf("%s: waiting for it: %s (claims %s)", t.Name, h, s.c.where))
	}
}
