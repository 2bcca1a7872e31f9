package simulate

import (
	"fmt"

	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/size"
)

// hostNeed is t's host need in a simulation from its memory: (declared, learned, or for an
// auto group that never ran the whole of usable, the limit less the margin: its first trial
// runs alone); 0 when host needs are not modelled (usable 0). A need that the limit can
// never hold fails, as a run would fail it at once.
func hostNeed(t *plan.Task, hist *history.History, limit, usable uint64, note func(string)) (uint64, error) {
	if usable == 0 || t.Host == nil {
		return 0, nil
	}
	need := t.Host.Memory
	if t.Host.Auto {
		learned, ok := hist.Host().Learned(t.Host.Group)
		if !ok {
			learned = usable
			note("memory: auto groups that never ran are taken to fill the container (their first trial learns the need)")
		}
		need = learned
	}
	if need > usable {
		return 0, fmt.Errorf("%s: %q needs more host memory than the container's limit: needs %s, the limit is %s (%s after the margin)",
			t.Pos, t.Name, size.Format(need), size.Format(limit), size.Format(usable))
	}
	return need, nil
}

// hostRoom is the container's room in a block simulation: unlimited when host needs are not
// modelled.
type hostRoom struct {
	modelled   bool
	free, used uint64
}

// newHostRoom is the room of usable bytes (0: not modelled).
func newHostRoom(usable uint64) *hostRoom {
	return &hostRoom{modelled: usable > 0, free: usable}
}

func (h *hostRoom) fits(need uint64) bool { return !h.modelled || need <= h.free }

// take holds need and returns what is held in all.
func (h *hostRoom) take(need uint64) uint64 {
	if !h.modelled {
		return 0
	}
	h.free -= need
	h.used += need
	return h.used
}

func (h *hostRoom) give(need uint64) {
	if h.modelled {
		h.free += need
		h.used -= need
	}
}
