package gpusim

import (
	"testing"
)

// BenchmarkStretchRead is what a training process pays at each tick to read its pace: the
// state lock, and the claims of the 12 processes on its GPU.
func BenchmarkStretchRead(b *testing.B) {
	dir := b.TempDir()
	devs := fakeSizes(80 * gi)
	st, err := openState(dir, devs)
	if err != nil {
		b.Fatal(err)
	}
	var claims []*claim
	for range 12 {
		c := &claim{st: st, devs: []int{0}}
		if err := c.set(gi, nil); err != nil {
			b.Fatal(err)
		}
		if err := c.compute(Load{Busy: 0.3, SM: 1}); err != nil {
			b.Fatal(err)
		}
		claims = append(claims, c)
	}
	b.Cleanup(func() {
		for _, c := range claims {
			_ = c.release()
		}
	})
	b.ResetTimer()
	for b.Loop() {
		if s, err := claims[0].stretch(); err != nil || s <= 1 {
			b.Fatalf("stretch %v, %v; want twelve of busy 0.3 to contend", s, err)
		}
	}
}
