package metric

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMetricsWithoutBounds (issue: metrics without bounds): 200,000 points, a thousand
// names and a 10 KB name are bounded per trial, each with a warning; a long series keeps
// its first, last, lowest and highest points and an even spread, in order.
func TestMetricsWithoutBounds(t *testing.T) {
	var s Set
	const n = 200_000
	for i := range n {
		v := float64(i % 1000)
		switch i {
		case 23_457:
			v = -5 // the lowest, between kept points
		case 176_543:
			v = 5000 // the highest
		}
		s.Line("runall-metric loss=" + strconv.FormatFloat(v, 'g', -1, 64))
	}
	var list strings.Builder
	list.WriteString(`{"acc": [`)
	for i := range 5000 {
		if i > 0 {
			list.WriteString(",")
		}
		list.WriteString(strconv.Itoa(i))
	}
	list.WriteString("]}")
	s.File("m.json", []byte(list.String()))
	for i := range 1000 {
		s.Line("runall-metric m" + strconv.Itoa(i) + "=1")
	}
	s.Line("runall-metric " + strings.Repeat("x", 10_000) + "=1")

	last, series, warnings := s.Result()
	if len(last) != MaxNames {
		t.Errorf("%d names kept, want %d", len(last), MaxNames)
	}
	loss := series["loss"]
	if len(loss) > MaxPoints || len(loss) < MaxPoints/2 {
		t.Fatalf("loss: %d points kept, want at most %d", len(loss), MaxPoints)
	}
	if loss[0] != 0 || loss[len(loss)-1] != 999 || slices.Min(loss) != -5 || slices.Max(loss) != 5000 {
		t.Errorf("loss: first %v, last %v, min %v, max %v: want 0, 999, -5, 5000", loss[0], loss[len(loss)-1], slices.Min(loss), slices.Max(loss))
	}
	if slices.Index(loss, -5) > slices.Index(loss, 5000) {
		t.Errorf("loss: the extremes are out of order")
	}
	if last["loss"] != 999 {
		t.Errorf("loss: last %v", last["loss"])
	}
	acc := series["acc"]
	if len(acc) == 0 {
		t.Fatal("acc from the file: left out")
	}
	if len(acc) > MaxPoints || acc[0] != 0 || acc[len(acc)-1] != 4999 || !slices.IsSorted(acc) {
		t.Errorf("acc from the file: %d points, %v..%v", len(acc), acc[0], acc[len(acc)-1])
	}
	// An even spread: no gap between kept points of the same ramp is much over the mean.
	for i := 1; i < len(acc); i++ {
		if acc[i]-acc[i-1] > 3*5000/float64(MaxPoints) {
			t.Errorf("acc: a gap from %v to %v", acc[i-1], acc[i])
			break
		}
	}
	all := strings.Join(warnings, "\n")
	for _, want := range []string{"a name longer than 128 bytes", "more than 100 metric names", "metric loss: 200000 points, more than 1000", "metric acc: 5000 points"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in\n%s", want, all)
		}
	}
	if len(all) > 4000 {
		t.Errorf("warnings are %d bytes", len(all))
	}
}
