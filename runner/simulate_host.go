package runner

import (
	"fmt"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/size"
)

// hostNeed sets slot's host need from t's memory: (declared, learned, or for an auto group
// that never ran the whole limit: its first trial runs alone), and fails a need that the
// limit can never hold, as a run would fail it at once.
func (s *simulation) hostNeed(t *plan.Task, slot *Slot) error {
	if s.hostUsable == 0 || t.Host == nil {
		return nil
	}
	need := t.Host.Memory
	if t.Host.Auto {
		learned, ok := s.hist.HostLearned(t.Host.Group)
		if !ok {
			learned = s.hostUsable
			s.note("memory: auto groups that never ran are taken to fill the container (their first trial learns the need)")
		}
		need = learned
	}
	if need > s.hostUsable {
		return fmt.Errorf("%s: %q needs more host memory than the container's limit: needs %s, the limit is %s (%s after the margin)",
			t.Pos, t.Name, size.Format(need), size.Format(s.opts.HostLimit), size.Format(s.hostUsable))
	}
	slot.HostNeed = need
	return nil
}

// hostRoom is the container's room in a block simulation: unlimited when host needs are not
// modelled.
type hostRoom struct {
	modelled   bool
	free, used uint64
}

func (s *simulation) hostRoom() *hostRoom {
	return &hostRoom{modelled: s.hostUsable > 0, free: s.hostUsable}
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
