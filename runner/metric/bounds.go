package metric

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/runall/runall/internal/lazyre"
)

// A trial's metrics are bounded, whatever reports them: a trial that prints a million
// lines, or a thousand names, would otherwise fill runall's memory, results.json, the
// report and everything they are sent to. Each bound reached is one warning.
const (
	// MaxNames is the most metric names one trial keeps; later names are left out.
	MaxNames = 100
	// MaxNameLen is the longest metric name kept, in bytes.
	MaxNameLen = 128
	// MaxPoints is the most points a series keeps: a longer one is downsampled to its
	// first and last points, its lowest and highest (the best, whichever way is better) and
	// an even spread between, in their order.
	MaxPoints = 1000
)

// valueRE is a number as Python, Keras, numpy or a shell print it: a sign, decimal digits
// with an optional point and exponent (a leading + is what Python's "{:+.4f}" prints, and
// what Katib's metric filter takes). Go's ParseFloat alone would also take hex floats
// (0x1p-2), digit separators (1_000) and words (inf); no trainer prints those, so one that
// shows up is a mistake to report, not a value to guess.
var valueRE = lazyre.New(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// ParseValue parses a metric value as printed: a finite decimal number. Every metric
// source goes through it.
func ParseValue(s string) (float64, error) {
	if !valueRE.MatchString(s) {
		return 0, fmt.Errorf("%q is not a finite number (want decimal digits, as Python prints them)", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

// series is one metric's points as they arrive, kept at most 2*MaxPoints long: when full,
// every other point goes and only every stride-th point from then on is kept, so that what
// is kept stays an even spread. The extremes and the last point are kept aside.
type series struct {
	points   []float64
	stride   int // keep one point in stride
	seen     int // points reported
	min, max extreme
	last     float64
}

// extreme is a series' lowest or highest point and where it was.
type extreme struct {
	v  float64
	at int
}

func (s *series) add(v float64) {
	if s.stride == 0 {
		s.stride = 1
	}
	if s.seen == 0 || v < s.min.v {
		s.min = extreme{v, s.seen}
	}
	if s.seen == 0 || v > s.max.v {
		s.max = extreme{v, s.seen}
	}
	if s.seen%s.stride == 0 {
		s.points = append(s.points, v)
		if len(s.points) >= 2*MaxPoints {
			s.points = thin(s.points)
			s.stride *= 2
		}
	}
	s.last = v
	s.seen++
}

// thin keeps every other point.
func thin(p []float64) []float64 {
	n := 0
	for i := 0; i < len(p); i += 2 {
		p[n] = p[i]
		n++
	}
	return p[:n]
}

// values is the series, at most MaxPoints long: all of it when it is that short.
func (s *series) values() []float64 {
	if s.stride == 1 && len(s.points) <= MaxPoints {
		return slices.Clone(s.points)
	}
	// The kept points are at 0, stride, 2*stride...; the extremes and the last go in
	// where they were, then an even pick brings the whole to MaxPoints.
	at := make([]int, len(s.points))
	for i := range at {
		at[i] = i * s.stride
	}
	return pick(s.points, at, []extreme{s.min, s.max, {s.last, s.seen - 1}}, MaxPoints)
}

// pick chooses at most n points: vals[0] and the must points, and an even spread of vals
// (vals[i] was reported at[i]-th), in the order they were reported.
func pick(vals []float64, at []int, must []extreme, n int) []float64 {
	type point struct {
		v  float64
		at int
	}
	chosen := map[int]float64{}
	for _, m := range must {
		chosen[m.at] = m.v
	}
	chosen[at[0]] = vals[0]
	spread := n - len(chosen)
	for k := 0; k < spread && len(vals) > 1; k++ {
		i := k * (len(vals) - 1) / max(spread-1, 1)
		chosen[at[i]] = vals[i]
	}
	out := make([]point, 0, len(chosen))
	for a, v := range chosen {
		out = append(out, point{v, a})
	}
	slices.SortFunc(out, func(a, b point) int { return a.at - b.at })
	vs := make([]float64, len(out))
	for i, p := range out {
		vs[i] = p.v
	}
	return vs
}
