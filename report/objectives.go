package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/results"
)

// What the page shows of a sweep's objectives beyond the focus metric: each objective's
// parameter importances as bars (results.json's importance), and, with two objectives or
// more, the trials on the first two with their Pareto fronts.

// importance draws one chart of bars per objective, most important first, each with its
// share and the sign of its correlation; the note says what makes them say little.
func (sc studyCharts) importance() {
	objs := sc.p.run.AllObjectives()
	if len(sc.p.run.Importance) == 0 || len(objs) == 0 {
		return
	}
	quantile := 0.0 // every objective's is computed with the same quantile
	for _, imp := range sc.p.run.Importance {
		quantile = imp.Quantile
	}
	sc.p.printf("<section id=\"importance\">\n<h2>Parameter importance</h2>\n")
	sc.p.printf("<p class=\"note\">PED-ANOVA, as Optuna computes it: how differently each parameter's values are spread among the best %g%% of the trials that succeeded than among all of them; the shares sum to 1. +/−: the metric rises/falls as the parameter grows (Spearman).</p>\n", 100*quantile)
	sc.p.printf("<div class=\"charts\">\n")
	for _, o := range objs {
		imp, ok := sc.p.run.Importance[o.Metric]
		if !ok {
			continue
		}
		const w, rowH = 360.0, 22.0
		h := rowH*float64(len(imp.Params)) + 8
		sc.p.printf("<figure data-metric=\"%s\"><figcaption>%s (%s) · %d trials, %d on top</figcaption>\n", esc(o.Metric), esc(o.Metric), esc(o.Mode), imp.Trials, imp.Top)
		if imp.Note != "" {
			sc.p.printf("<p class=\"note\">%s</p>\n", esc(imp.Note))
		}
		if len(imp.Params) > 0 {
			sc.p.printf("<svg class=\"importance\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n", w, h, w, h)
			for i, q := range imp.Params {
				y := 4 + rowH*float64(i)
				sign := map[string]string{"+": " +", "-": " −"}[q.Sign]
				sc.p.printf("<text x=\"116\" y=\"%.0f\" text-anchor=\"end\">%s</text>", y+14, esc(q.Name))
				sc.p.printf("<rect class=\"imp\" data-param=\"%s\" data-importance=\"%g\" x=\"120\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\"><title>%s: %.3f%s</title></rect>",
					esc(q.Name), q.Importance, y+2, math.Max(0.5, 180*q.Importance), rowH-6, esc(q.Name), q.Importance, sign)
				sc.p.printf("<text x=\"%.1f\" y=\"%.0f\">%.2f%s</text>\n", 124+180*q.Importance, y+14, q.Importance, sign)
			}
			sc.p.printf("</svg>\n")
		}
		sc.p.printf("</figure>\n")
	}
	sc.p.printf("</div>\n</section>\n")
}

// front draws the trials that have a Pareto front on the first two objectives: the first
// front marked and joined by a line, each point titled with its front.
func (sc studyCharts) front() {
	objs := sc.p.run.AllObjectives()
	if len(objs) < 2 {
		return
	}
	a, b := objs[0], objs[1]
	var pts []scatterPoint
	for _, i := range sc.p.order {
		t := sc.p.run.Tasks[i]
		if t.ParetoRank > 0 {
			pts = append(pts, scatterPoint{t: t, x: t.Metrics[a.Metric], y: t.Metrics[b.Metric]})
		}
	}
	sc.p.printf("<section id=\"front\">\n<h2>Pareto front: %s (%s) against %s (%s)</h2>\n", esc(a.Metric), esc(a.Mode), esc(b.Metric), esc(b.Mode))
	if len(pts) == 0 {
		sc.p.printf("<p class=\"note\">No trial succeeded with every objective yet.</p>\n</section>\n")
		return
	}
	const w, h = 480.0, 320.0
	xs, ys := pointScales(pts, w, h)
	sc.p.printf("<svg class=\"front\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n", w, h, w, h)
	sc.p.frame(w, h, xs, ys, a.Metric, b.Metric, xs.ticks(5), formatNum)
	var first []scatterPoint
	for _, q := range pts {
		if q.t.ParetoRank == 1 {
			first = append(first, q)
		}
	}
	slices.SortFunc(first, func(u, v scatterPoint) int { return cmp.Compare(u.x, v.x) })
	var path string
	for i, q := range first {
		path += fmt.Sprintf("%s%.1f %.1f ", map[bool]string{true: "M", false: "L"}[i == 0], xs.at(q.x), ys.at(q.y))
	}
	sc.p.printf("<path class=\"frontline\" d=\"%s\"/>\n", path)
	slices.Reverse(pts) // the first front last, drawn over the others
	for _, q := range pts {
		class := "pt"
		if q.t.ParetoRank == 1 {
			class += " front"
		}
		sc.p.printf("<circle class=\"%s\" data-task=\"%d\" data-front=\"%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%s: front %d, %s=%s, %s=%s</title></circle>\n",
			class, q.t.ID, q.t.ParetoRank, xs.at(q.x), ys.at(q.y), esc(q.t.Name), q.t.ParetoRank, esc(a.Metric), formatNum(q.x), esc(b.Metric), formatNum(q.y))
	}
	sc.p.printf("</svg>\n</section>\n")
}

// pointScales are linear scales that hold every point, padded.
func pointScales(pts []scatterPoint, w, h float64) (xs, ys scale) {
	xlo, xhi, ylo, yhi := pts[0].x, pts[0].x, pts[0].y, pts[0].y
	for _, q := range pts {
		xlo, xhi = math.Min(xlo, q.x), math.Max(xhi, q.x)
		ylo, yhi = math.Min(ylo, q.y), math.Max(yhi, q.y)
	}
	xlo, xhi = padded(xlo, xhi)
	ylo, yhi = padded(ylo, yhi)
	return scale{lo: xlo, hi: xhi, p0: chartPadL, p1: w - chartPadR}, scale{lo: ylo, hi: yhi, p0: h - chartPadB, p1: chartPadT}
}

// frontCell is a trial's Pareto front in the table: "1 (first)", "2"…, empty for none.
func (tb resultsTable) frontCell(t results.Task) {
	switch t.ParetoRank {
	case 0:
		tb.p.cell("", "", true)
	case 1:
		tb.p.cell("1", "1 (first)", true)
	default:
		tb.p.cell(strconv.Itoa(t.ParetoRank), strconv.Itoa(t.ParetoRank), true)
	}
}

// objectivesText is "val_accuracy (max) and latency_ms (min)".
func objectivesText(objs []results.Objective) string {
	var each []string
	for _, o := range objs {
		each = append(each, o.Metric+" ("+o.Mode+")")
	}
	if len(each) < 2 {
		return strings.Join(each, "")
	}
	return strings.Join(each[:len(each)-1], ", ") + " and " + each[len(each)-1]
}
