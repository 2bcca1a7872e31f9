package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/runall/runall/runner"
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
			fmt.Fprintf(&b, "  %s\n  (the timeline above assumes every trial runs to its end)\n", plan.DescribeEarlyStop(blk.EarlyStop, blk.TrialCount()))
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

// searchAlone refuses search: where several runalls share the trials: the claims queue and
// the shards split a list of trials known before the run, and a sampler's trials are made
// as it is asked; each runall would ask for all trials: N, and a killed runall's trials would
// be neither taken over nor told.
func searchAlone(p *plan.Plan, o runner.Options) error {
	how := "--claims"
	switch {
	case o.Shard.Count > 1:
		how = "--shard"
	case o.Claims.Prefix == "":
		return nil
	}
	for _, b := range p.Tasks {
		for _, t := range b.Parallel {
			if t.Search != nil {
				return usagef("%s: search: runs in one runall, not with %s: its trials are asked for as the run goes, so no queue or shard can split them. To share one study among several runalls, run each without %s, with trials: its share, and point ask and tell at the study's shared storage", t.Pos, how, how)
			}
		}
	}
	return nil
}
