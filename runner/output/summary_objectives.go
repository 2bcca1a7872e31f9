package output

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/importance"
	"github.com/runall/runall/runner/results"
)

// objectiveHead is the summary's columns for the objectives: one per metric, and FRONT
// (the Pareto front) where there are several.
func objectiveHead(objs []results.Objective) []string {
	var out []string
	for _, o := range objs {
		out = append(out, strings.ToUpper(o.Metric))
	}
	if len(objs) > 1 {
		out = append(out, "FRONT")
	}
	return out
}

// objectiveCells are a task's cells under objectiveHead: its value of each objective (the
// best by the first marked), and its front, "1 (first)" for the first, "-" for none.
func objectiveCells(res *results.Run, objs []results.Objective, t results.Task) []string {
	var out []string
	for k := range objs {
		out = append(out, objectiveText(&objs[k], t, k == 0 && res.IsBest(t)))
	}
	if len(objs) > 1 {
		switch t.ParetoRank {
		case 0:
			out = append(out, "-")
		case 1:
			out = append(out, "1 (first)")
		default:
			out = append(out, strconv.Itoa(t.ParetoRank))
		}
	}
	return out
}

// writeImportance closes the summary with the three most important parameters for each
// objective, each with the sign of its correlation with the objective's metric, and what
// makes them say little (too few trials).
func writeImportance(b *bytes.Buffer, res *results.Run) {
	blank := "\n"
	for _, o := range res.AllObjectives() {
		imp, ok := res.Importance[o.Metric]
		if !ok {
			continue
		}
		fmt.Fprintf(b, "%sImportance for %s (PED-ANOVA, top %g%% of %d trials):", blank, cleanName(o.Metric), imp.Quantile*100, imp.Trials)
		blank = ""
		var top []string
		for _, p := range imp.Params[:min(3, len(imp.Params))] {
			top = append(top, importanceText(p))
		}
		if len(top) > 0 {
			b.WriteString(" " + strings.Join(top, ", "))
		}
		b.WriteString("\n")
		if imp.Note != "" {
			b.WriteString("  " + cleanLine(imp.Note) + "\n")
		}
	}
}

// importanceText is "lr 0.72 (+)": a parameter's share of the importance, and the sign of
// its correlation where it has one.
func importanceText(p importance.Param) string {
	s := cleanName(p.Name) + " " + strconv.FormatFloat(p.Importance, 'f', 2, 64)
	if p.Sign != "" {
		s += " (" + p.Sign + ")"
	}
	return s
}
