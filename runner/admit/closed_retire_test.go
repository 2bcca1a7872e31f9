package admit

import "testing"

// TestClosedRetire: a device taken out of service stays closed when it is opened, with its
// reason; a device closed for a while opens.
func TestClosedRetire(t *testing.T) {
	var c Closed
	c.Close(0, "its MPS server restarts after a fault")
	c.Retire(0, "out of service: xid 79 (GPU has fallen off the bus)")
	c.Close(1, "its MPS server restarts after a fault")
	c.Open(0)
	c.Open(1)
	if got := c.reason(0); got != "out of service: xid 79 (GPU has fallen off the bus)" {
		t.Errorf("retired device 0 after Open: reason %q, want it still out of service", got)
	}
	if got := c.reason(1); got != "" {
		t.Errorf("device 1 after Open: reason %q, want open", got)
	}
}
