package report

import (
	"fmt"
	"strings"

	"github.com/runall/runall/runner/results"
)

// sharing draws what gpu-sharing: progress measured: what sharing bought, each GPU's number
// of trials over time as a step line, each trial's rate alone and shared, and the
// decisions, newest last. It is drawn from the run's start (with nothing measured yet), so
// that the live page has the part to replace.
func (p *page) sharing() {
	s := p.run.GPUSharing
	if s == nil {
		return
	}
	p.printf("<section id=\"sharing\">\n<h2>GPU sharing by progress</h2>\n")
	note := "Each GPU takes one more trial only while the last one admitted raised its throughput (the sum of each trial's rate shared over its rate alone)."
	if s.Summary != "" {
		note = esc(s.Summary) + ". " + note
	}
	p.printf("<p class=\"note\">%s</p>\n", note)
	for _, g := range s.GPUs {
		p.printf("<p>GPU %s: %s</p>\n", esc(g.GPU), p.stepLine(g.Counts))
	}
	if len(s.Trials) > 0 {
		p.printf("<div class=\"wrap\"><table>\n<thead><tr><th>Trial</th><th>Rate alone (steps/s)</th><th>From</th><th>Rate shared</th><th>Slowdown</th><th>Steps</th></tr></thead>\n<tbody>\n")
		for _, t := range s.Trials {
			p.printf("<tr><td>%s</td><td class=\"num\">%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
				esc(t.Trial), orDash(t.Alone), esc(t.AloneFrom), orDash(t.Shared), orDash(t.Slowdown), formatNum(t.Steps))
		}
		p.printf("</tbody>\n</table></div>\n")
	}
	if len(s.Decisions) > 0 {
		p.printf("<details><summary>%d decisions</summary>\n<ul>\n", len(s.Decisions))
		for _, d := range s.Decisions {
			p.printf("<li>%.1f s: %s</li>\n", d.At, esc(d.Line))
		}
		p.printf("</ul>\n</details>\n")
	}
	p.printf("</section>\n")
}

// orDash is v as the table shows it; "–" for 0, not known.
func orDash(v float64) string {
	if v == 0 {
		return "–"
	}
	return formatNum(v)
}

// stepLine draws a GPU's number of trials over time as a small SVG step line, from the
// run's start to its end (or now), its most at the top, with the counts it stepped through.
func (p *page) stepLine(counts []results.SharingCount) string {
	if len(counts) == 0 {
		return "no trial yet"
	}
	end := max(p.end.Sub(p.run.StartedAt).Seconds(), counts[len(counts)-1].At, 1e-3)
	most := 1
	for _, c := range counts {
		most = max(most, c.Trials)
	}
	const w, h = 320.0, 40.0
	x := func(at float64) float64 { return w * at / end }
	y := func(n int) float64 { return h - 2 - (h-4)*float64(n)/float64(most) }
	var pts, says strings.Builder
	for i, c := range counts {
		if i > 0 {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(c.At), y(counts[i-1].Trials))
		}
		fmt.Fprintf(&pts, "%.1f,%.1f ", x(c.At), y(c.Trials))
		if i < 24 {
			fmt.Fprintf(&says, "%d at %.0f s, ", c.Trials, c.At)
		}
	}
	fmt.Fprintf(&pts, "%.1f,%.1f", w, y(counts[len(counts)-1].Trials))
	text := strings.TrimSuffix(says.String(), ", ")
	if len(counts) > 24 {
		text += fmt.Sprintf(" … (%d changes)", len(counts))
	}
	return fmt.Sprintf("<svg width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"trials over time, at most %d\">"+
		"<polyline fill=\"none\" stroke=\"currentColor\" points=\"%s\"/></svg> at most %d at once (%s)",
		w, h, most, pts.String(), most, esc(text))
}
