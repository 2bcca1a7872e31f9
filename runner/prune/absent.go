package prune

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runall/runall/runner/plan"
)

// absentAfter is how many steps of its other metrics a trial reports before the rule's
// metric, never seen, is said to be missing: a metric that is only late (validation every few
// epochs) has had its chance by then.
const absentAfter = 3

// maxOtherNames bounds the other metric names kept per block, as a trial's are.
const maxOtherNames = 100

// absence notices a block whose rule compares a metric no trial reports (val_acc where the
// trials print val_accuracy): early stopping is then off, which must not go unsaid. Only the
// pruner's Event touches it.
type absence struct {
	seen   bool           // a trial reported the rule's metric
	others map[string]int // the other metrics reported, with the most steps one trial reached
	ran    bool           // a trial of the block started
	said   bool           // the warning was given as the trials ran
}

// metric notes one value of a trial of the block; it returns the warning to give now, once.
func (a *absence) metric(block *plan.Task, rule, name string, step int) string {
	if name == rule {
		a.seen = true
		return ""
	}
	if a.others == nil {
		a.others = map[string]int{}
	}
	if _, ok := a.others[name]; ok || len(a.others) < maxOtherNames {
		a.others[name] = max(a.others[name], step)
	}
	if a.seen || a.said || step < absentAfter {
		return ""
	}
	a.said = true
	return a.warning(block, rule, fmt.Sprintf("after %d steps of its other metrics", step))
}

// atEnd is the warning to give as the run ends, when no trial that ran reported the metric.
func (a *absence) atEnd(block *plan.Task, rule string) string {
	if a.seen || !a.ran && len(a.others) == 0 {
		return ""
	}
	return a.warning(block, rule, "in the whole run")
}

func (a *absence) warning(block *plan.Task, rule, when string) string {
	name := "a block"
	if block != nil {
		name = fmt.Sprintf("block %q", block.Name)
	}
	names := slices.Sorted(maps.Keys(a.others))
	msg := fmt.Sprintf("early-stop: no trial of %s reported %s %s, so none is stopped early", name, rule, when)
	if len(names) == 0 {
		return msg + " (they reported no metric step by step: a metrics: file is read only at the end)"
	}
	shown := names
	if len(shown) > 8 {
		shown = append(shown[:8:8], "...")
	}
	msg += " (they reported " + strings.Join(shown, ", ") + ")"
	if s := plan.Suggest(rule, names); s != "" {
		msg += ": did you mean " + s + "?"
	}
	return msg
}
