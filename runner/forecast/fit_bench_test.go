package forecast

import "testing"

// BenchmarkFit is the cost of one decision's fit: the eleven families over a curve of 20
// points (about 20-35 ms on one core: a trial that reports an epoch a second costs its
// block's goroutine a few percent of a core).
func BenchmarkFit(b *testing.B) {
	pts := curve(known[0].f, 20, 0.003, 1)
	for b.Loop() {
		Fit(pts, 60, nil)
	}
}
