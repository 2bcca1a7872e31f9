package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/runall/runall/runner/checkprint"
	"github.com/runall/runall/runner/plan"
)

// writeAdaptive prints, under a prediction, what of a sweep adapts as it runs: each block's
// trials with their params (the sampled values among them), where a sampler of the user's
// own hands them out, and the early-stopping rule with what asha lets through each rung.
// The timeline above assumes every trial runs to its end.
func writeAdaptive(w io.Writer, p *plan.Plan) {
	var b strings.Builder
	for _, blk := range p.Tasks {
		if !blk.IsBlock() {
			continue
		}
		var lines []string
		for _, t := range blk.Parallel {
			switch {
			case t.Search != nil:
				lines = append(lines, fmt.Sprintf("  %s: %d trials whose params come from search: ask (not in the timeline: one stands for them)", t.Name, t.Search.Trials))
			case len(t.Params) > 0 && (blk.EarlyStop != nil || hasSampled(blk)):
				lines = append(lines, "  "+withParams(t))
			}
		}
		if blk.EarlyStop == nil && len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", blk.Name)
		if blk.EarlyStop != nil {
			fmt.Fprintf(&b, "  %s\n  (the timeline above assumes every trial runs to its end)\n", checkprint.EarlyStop(blk.EarlyStop, blk.TrialCount()))
		}
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	if b.Len() > 0 {
		io.WriteString(w, "\nSweeps that adapt:"+b.String())
	}
}

// hasSampled reports whether a block holds trials with params (sample, matrix, flags).
func hasSampled(blk *plan.Task) bool {
	for _, t := range blk.Parallel {
		if len(t.Params) > 0 {
			return true
		}
	}
	return false
}

// withParams is a trial's name, followed by its params unless the name shows them all.
func withParams(t *plan.Task) string {
	parts := make([]string, len(t.Params))
	shown := true
	for i, p := range t.Params {
		parts[i] = p.Name + "=" + p.Value
		shown = shown && strings.Contains(t.Name, parts[i])
	}
	if shown {
		return t.Name
	}
	return t.Name + ": " + strings.Join(parts, " ")
}
