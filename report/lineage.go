package report

import (
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
			p.printf("<tr><td>%s</td><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
				esc(t.Name), e.Step, esc(e.From), formatNum(e.Value), esc(strings.Join(values, " ")))
		}
	}
	p.printf("</tbody>\n</table></div>\n</section>\n")
}
