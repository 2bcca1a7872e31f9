package simulate

import (
	"testing"

	"github.com/runall/runall/runner/plan"
)

// check --simulate's compute model overlaps kernels on every device under gpu-isolation, and
// is left as it is without.
func TestIsolatedCompute(t *testing.T) {
	for mode, want := range map[plan.Isolation]bool{plan.IsolationNone: false, plan.IsolationMPS: true, plan.IsolationAuto: true} {
		p := &plan.Plan{Config: plan.Config{GPUIsolation: mode}}
		c := isolatedCompute(Compute{Busy: 1}, p, 2)
		if got := len(c.MPS) == 2 && c.MPS[0] && c.MPS[1]; got != want {
			t.Errorf("gpu-isolation %s: MPS %v, want on for both devices: %v", mode, c.MPS, want)
		}
	}
}
