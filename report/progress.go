package report

import (
	"strconv"
	"time"

	"github.com/runall/runall/runner/results"
)

// progressText says how far a running trial's output says it came: "20/40 it · 4 it/s · 5.0s
// left"; "" when it said nothing.
func progressText(p *results.Progress) string {
	if p == nil {
		return ""
	}
	s := formatNum(p.Iter)
	if p.Of > 0 {
		s += "/" + formatNum(p.Of)
	}
	s += " " + p.Unit
	if p.Label != "" {
		s = p.Label + ": " + s
	}
	if p.Rate > 0 {
		s += " · " + strconv.FormatFloat(p.Rate, 'g', 3, 64) + " " + p.Unit + "/s"
	}
	if p.ETASeconds > 0 {
		s += " · " + humanDuration(time.Duration(p.ETASeconds*float64(time.Second))) + " left"
	}
	return s
}
