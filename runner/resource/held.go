package resource

import (
	"sync"

	"github.com/runall/runall/runner/sched"
)

// Held is what a resource reserved for each trial it admitted, until the trial releases it.
type Held[P any] struct {
	mu sync.Mutex
	m  map[*sched.Trial]P
}

// Put keeps p as tr's.
func (h *Held[P]) Put(tr *sched.Trial, p P) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[*sched.Trial]P{}
	}
	h.m[tr] = p
}

// Get is tr's; the zero P without one.
func (h *Held[P]) Get(tr *sched.Trial) P {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[tr]
}

// Take removes and returns tr's reservation; ok is false when there was none.
func (h *Held[P]) Take(tr *sched.Trial) (p P, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok = h.m[tr]
	delete(h.m, tr)
	return p, ok
}

// Count is how many reservations match.
func (h *Held[P]) Count(match func(P) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, p := range h.m {
		if match(p) {
			n++
		}
	}
	return n
}
