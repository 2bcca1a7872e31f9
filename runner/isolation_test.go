package runner

import (
	"testing"

	"github.com/runall/runall/gpu/mps"
	"github.com/runall/runall/runner/plan"
)

// A trial is requeued as a fault's bystander at most maxBystander times: one whose own fault
// the server log never tied to it would otherwise go round for ever.
func TestBystanderRequeuesAreBounded(t *testing.T) {
	i := &isolation{victims: map[int]int{}}
	for n := 1; n <= maxBystander; n++ {
		if !i.RequeueBystander(7) {
			t.Fatalf("requeue %d of task 7 refused, want %d allowed", n, maxBystander)
		}
	}
	if i.RequeueBystander(7) {
		t.Errorf("task 7 requeued a %dth time as a bystander", maxBystander+1)
	}
	if !i.RequeueBystander(8) {
		t.Errorf("task 8 refused its first requeue: the count is per task")
	}
}

// check --simulate's compute model overlaps kernels on every device under gpu-isolation, and
// is left as it is without.
func TestIsolatedCompute(t *testing.T) {
	for mode, want := range map[mps.Mode]bool{mps.None: false, mps.On: true, mps.Auto: true} {
		p := &plan.Plan{Config: plan.Config{GPUIsolation: mode}}
		c := isolatedCompute(Compute{Busy: 1}, p, 2)
		if got := len(c.MPS) == 2 && c.MPS[0] && c.MPS[1]; got != want {
			t.Errorf("gpu-isolation %s: MPS %v, want on for both devices: %v", mode, c.MPS, want)
		}
	}
}
