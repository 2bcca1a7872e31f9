package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runall/runall/runner/results"
)

// lineage is population-based training's section: for each trial that continued from
// another's checkpoint, when, from whom, its own value there, and the values it went on
// with. None when no trial did.
func (p *page) lineage() {
	if !slices.ContainsFunc(p.run.Tasks, func(t results.Task) bool { return len(t.Lineage) > 0 }) {
		return
	}
	metric := cmpOr(p.focus, "value")
	p.printf("<section id=\"lineage\">\n<h2>Lineage</h2>\n<p class=\"note\">Population-based training: each trial of the bottom quantile continued from a copy of a better trial's checkpoint, with its values explored.</p>\n")
	p.printf("<div class=\"wrap\"><table>\n<thead><tr><th>Trial</th><th>Step</th><th>Continued from</th><th>Its %s there</th><th>Went on with</th></tr></thead>\n<tbody>\n", esc(metric))
	for _, i := range p.order {
		t := p.run.Tasks[i]
		for _, e := range t.Lineage {
			var values []string
			for _, k := range slices.Sorted(maps.Keys(e.Params)) {
				values = append(values, k+"="+e.Params[k])
			}
			from := e.From
			if len(e.Donated) == 2 {
				from += fmt.Sprintf(" (its values at epochs %d to %d, dotted on the curve)", e.Donated[0], e.Donated[1])
			}
			p.printf("<tr><td>%s</td><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
				esc(t.Name), e.Step, esc(from), formatNum(e.Value), esc(strings.Join(values, " ")))
		}
	}
	p.printf("</tbody>\n</table></div>\n</section>\n")
}

// donorParts draws apart, dotted over a pbt trial's curve, the steps of its series that are
// a donor's values (an exploit's donated steps: the donor's checkpoint held them when it
// was copied), from the trial's own value before them: they are not the trial's own.
func (p *page) donorParts(t results.Task, s []float64, xs, ys scale) {
	for _, e := range t.Lineage {
		if len(e.Donated) != 2 {
			continue
		}
		from, to := max(e.Donated[0]-1, 1), min(e.Donated[1], len(s))
		if from >= to {
			continue
		}
		var pts strings.Builder
		for step := from; step <= to; step++ {
			fmt.Fprintf(&pts, "%.1f,%.1f ", xs.at(float64(step)), ys.at(s[step-1]))
		}
		p.printf("<polyline class=\"donor\" points=\"%s\"><title>%s: epochs %d to %d are %s's values (its checkpoint, copied at the exploit at step %d)</title></polyline>\n",
			strings.TrimSpace(pts.String()), esc(t.Name), e.Donated[0], e.Donated[1], esc(e.From), e.Step)
	}
}
