package checkprint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/plan"
)

// What check prints of the keys of sweeps that adapt.

// describeFormats says what is read from the output where it differs from the default.
func describeFormats(f metric.Formats) []string {
	var out []string
	if f.NoBuiltin {
		out = append(out, "no Keras or Hugging Face metric lines (recognize-metrics: false)")
	}
	for _, p := range f.Patterns {
		out = append(out, "metric-pattern "+strconv.Quote(p.String()))
	}
	return out
}

// EarlyStop is one line for an early-stop rule; with asha and trials > 0, its budget:
// about how many trials reach each rung and, with max (the trials' length), how many steps
// they run in all.
func EarlyStop(c *earlystop.Config, trials int) string {
	mode := "higher"
	if c.Mode == "min" {
		mode = "lower"
	}
	switch c.Method {
	case earlystop.SHA, earlystop.Hyperband, earlystop.PBT:
		return describeRounds(c, trials, mode)
	case earlystop.ASHA:
		s := fmt.Sprintf("early stop: asha on %s (%s is better), grace %d, reduction %d", c.Metric, mode, c.Grace, c.Reduction)
		if c.Max > 0 {
			s += fmt.Sprintf(", max %d", c.Max)
		}
		var rungs []string
		for i, r := range c.Budget(max(trials, 1), c.Max) {
			switch {
			case trials <= 0:
				rungs = append(rungs, "step "+strconv.Itoa(r.Step))
			case i == 0:
				rungs = append(rungs, fmt.Sprintf("step %d: %d", r.Step, trials))
			default:
				rungs = append(rungs, fmt.Sprintf("step %d: %.1f", r.Step, r.Trials))
			}
			if len(rungs) == 6 {
				rungs = append(rungs, "...")
				break
			}
		}
		switch {
		case len(rungs) > 0 && trials > 0:
			s += "; trials reaching each rung, about: " + strings.Join(rungs, ", ")
		case len(rungs) > 0:
			s += "; rungs " + strings.Join(rungs, ", ")
		}
		if trials > 0 && c.Max > 0 {
			all := trials * c.Max
			run := c.ExpectedSteps(trials, c.Max)
			s += fmt.Sprintf("; about %.0f steps in all, of the %d that every trial run to step %d takes (%.0f%%)", run, all, c.Max, 100*run/float64(all))
		}
		return s
	case earlystop.Forecast:
		fams := "all 11 curve families"
		if len(c.Families) > 0 {
			fams = strings.Join(c.Families, ", ")
		}
		return fmt.Sprintf("early stop: forecast on %s (%s is better), from step %d, of the value at step %d (%s): a trial stops when its chance of ending better than the best is below %g",
			c.Metric, mode, c.Grace, c.Max, fams, c.MinChance)
	case earlystop.Median:
		return fmt.Sprintf("early stop: median on %s (%s is better), from step %d, once %d other trials are there", c.Metric, mode, c.Grace, c.MinTrials)
	}
	return "early stop: " + c.Method
}

// describeSearch says where a search template's trials come from.
func describeSearch(s *plan.Search) string {
	return fmt.Sprintf("search: %s asked of: %s; told with: %s", plural(s.Trials, "trial", "trials"), firstLine(s.Ask), firstLine(s.Tell))
}

func firstLine(s string) string {
	if l, _, more := strings.Cut(s, "\n"); more {
		return l + " ..."
	}
	return s
}

func sameFormats(a, b metric.Formats) bool {
	if a.NoBuiltin != b.NoBuiltin || len(a.Patterns) != len(b.Patterns) {
		return false
	}
	for i := range a.Patterns {
		if a.Patterns[i] != b.Patterns[i] {
			return false
		}
	}
	return true
}
