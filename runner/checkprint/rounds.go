package checkprint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/earlystop"
)

// describeRounds is check's line for sha, hyperband and pbt: the rule, and its schedule over
// the block's trials: the rounds of each bracket and how many trials pause at each, the
// steps they run in all against every trial run to its end, and how often they start (each
// resume starts the script again, and pays its start-up).
func describeRounds(c *earlystop.Config, trials int, mode string) string {
	s := fmt.Sprintf("early stop: %s on %s (%s is better)", c.Method, c.Metric, mode)
	switch c.Method {
	case earlystop.PBT:
		p := c.Population
		s += fmt.Sprintf(", every %d steps", p.Interval)
		if c.Max > 0 {
			s += fmt.Sprintf(" to max %d", c.Max)
		}
		values := "its values"
		if len(p.Explore) > 0 {
			values = "its " + strings.Join(p.Explore, ", ") + " (the rest as they are)"
		}
		s += fmt.Sprintf(": at each round the trials pause at their checkpoints, and the bottom %s continue from a copy of a top-%s trial's checkpoint with %s multiplied by %s or, with chance %s, drawn again from the space",
			percent(p.Quantile), percent(p.Quantile), values, factors(p.Perturb), strconv.FormatFloat(p.Resample, 'g', 3, 64))
	default:
		s += fmt.Sprintf(", grace %d, reduction %d", c.Grace, c.Reduction)
		if c.Max > 0 {
			s += fmt.Sprintf(", max %d", c.Max)
		}
		s += fmt.Sprintf(": the trials pause at their checkpoints at each rung, and the best 1/%d of each rung resume", c.Reduction)
	}
	if trials <= 0 {
		return s
	}
	return s + "; " + scheduleOf(c, trials)
}

// scheduleOf is the rounds of each bracket and what they cost.
func scheduleOf(c *earlystop.Config, trials int) string {
	plans := c.Schedule(trials)
	word := "rungs at"
	if c.Method == earlystop.PBT {
		word = "rounds at"
	}
	var parts []string
	steps, starts := 0, 0
	for i, p := range plans {
		var rounds []string
		for k, r := range p.Rounds {
			if k == 0 {
				rounds = append(rounds, fmt.Sprintf("step %d: %s", r.Step, plural(r.Trials, "trial", "trials")))
			} else {
				rounds = append(rounds, fmt.Sprintf("step %d: %d", r.Step, r.Trials))
			}
		}
		if len(rounds) > 6 {
			rounds = append(rounds[:6], "...")
		}
		end := "to their end"
		if c.Max > 0 {
			end = "to step " + strconv.Itoa(c.Max)
		}
		part := fmt.Sprintf("no rung: %d run %s", p.Last, end)
		if len(rounds) > 0 {
			part = fmt.Sprintf("%s %s, then %d run %s", word, strings.Join(rounds, ", "), p.Last, end)
		}
		if len(plans) > 1 {
			part = fmt.Sprintf("bracket %d (%s): %s", i+1, plural(p.Trials, "trial", "trials"), part)
		}
		parts = append(parts, part)
		steps += p.Steps
		starts += p.Starts
	}
	s := strings.Join(parts, "; ")
	if c.Max > 0 {
		all := trials * c.Max
		s += fmt.Sprintf("; GPU-time, about: %d of the %d steps that every trial run to step %d takes (%.0f%%)", steps, all, c.Max, 100*float64(steps)/float64(all))
	}
	return s + fmt.Sprintf(", in %d starts instead of %d (each pays the script's start-up)", starts, trials)
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'g', 3, 64) + "%" }

func factors(fs []float64) string {
	var out []string
	for _, f := range fs {
		out = append(out, strconv.FormatFloat(f, 'g', 4, 64))
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}
