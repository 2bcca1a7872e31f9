package eventually

import (
	"testing"
	"time"
)

// A condition that comes true is waited for; one that never does is given up on near the
// limit, not at once and not forever.
func TestUntil(t *testing.T) {
	n := 0
	if !Until(time.Second, func() bool { n++; return n == 3 }) {
		t.Errorf("a condition true at the third ask was given up on")
	}
	if n != 3 {
		t.Errorf("asked %d times, want 3", n)
	}
	start := time.Now()
	if Until(100*time.Millisecond, func() bool { return false }) {
		t.Errorf("a condition never true was said to hold")
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("gave up after %s, before the limit", waited)
	}
}
