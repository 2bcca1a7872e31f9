package admit

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/needs"
)

// TestGate: a device that has the memory takes a trial only where its request's gate lets
// it; a trial every room of which the gate refuses waits with the gate's reason, and one
// that lacks the memory waits for memory whatever the gate says.
func TestGate(t *testing.T) {
	const gi = 1 << 30
	a := newTestAdmitter(newFakeProbe(32*gi, 32*gi))
	only1 := func(dev int) (bool, string) { return dev == 1, "gpu 0: held back" }
	// Best fit alone would pick GPU 0 (ties go to the lower index).
	p, why, err := place(a, Request{Request: needs.Request{ID: 1, Name: "t1", Memory: 4 * gi}, Gate: only1})
	if err != nil || p == nil || p.Devices[0] != 1 {
		t.Fatalf("Place = %+v, %q, %v; want GPU 1, the one the gate lets", p, why, err)
	}
	none := func(dev int) (bool, string) { return false, "gpu: measuring" }
	if p, why, _ := place(a, Request{Request: needs.Request{ID: 2, Name: "t2", Memory: 4 * gi}, Gate: none}); p != nil || why != "gpu: measuring" {
		t.Errorf("Place refused by the gate = %+v, %q; want nil and the gate's reason", p, why)
	}
	only0 := func(dev int) (bool, string) { return dev == 0, "" }
	if p, _, _ := place(a, Request{Request: needs.Request{ID: 5, Name: "t5", Memory: 20 * gi}, Gate: only0}); p == nil || p.Devices[0] != 0 {
		t.Fatalf("Place = %+v; want GPU 0", p)
	}
	if p, why, _ := place(a, Request{Request: needs.Request{ID: 3, Name: "t3", Memory: 28 * gi}, Gate: none}); p != nil || !strings.HasPrefix(why, "needs ") {
		t.Errorf("Place with no memory = %+v, %q; want the memory's reason", p, why)
	}
	if p, _, _ := place(a, Request{Request: needs.Request{ID: 4, Name: "t4", Memory: 4 * gi}}); p == nil || p.Devices[0] != 0 {
		t.Errorf("Place without a gate = %+v; want best fit, GPU 0", p)
	}
}
