package report

import (
	"fmt"
	"slices"
)

// The parallel coordinates and the contour of a pair of parameters: canvases the page's
// script draws from the plot data (plotdata.go), so that 10,000 trials are one block of
// numbers and not 10,000 elements; brushing a range on an axis of the parallel coordinates
// filters the table and the other charts.

// parcoords is the section of the parallel coordinates, which holds the plot data.
func (sc studyCharts) parcoords() {
	d := sc.plotData()
	sc.p.printf("<section id=\"parcoords\">\n<h2>Parallel coordinates</h2>\n")
	if len(d.IDs) == 0 || len(d.Axes) < 2 {
		sc.p.printf("<p class=\"note\">No trial has hyperparameters and a metric to draw: trials get them from matrix:, for-each or search:.</p>\n</section>\n")
		return
	}
	colour := "status"
	if d.Color >= 0 {
		colour = fmt.Sprintf("%s (the best magenta, the worst light blue)", d.Axes[d.Color].Name)
	}
	sc.p.printf("<p class=\"note\">One line per trial across an axis per parameter and per objective, coloured by %s; "+
		"logarithmic axes for parameters sampled so or spanning two decades, one place per value for choices. "+
		"Drag along an axis to keep the trials within a range (the table and the other charts follow); click an axis to clear its range. "+
		"<button type=\"button\" class=\"clear\" hidden=\"\">clear every range</button> <span class=\"count\"></span></p>\n", esc(colour))
	w := max(760, 120*len(d.Axes))
	// Four canvases in one place (pcscript.go): the axes on top, which take the mouse, over
	// every line, the lines kept and the brushed ranges.
	sc.p.printf("<div class=\"stack\"><canvas class=\"parcoords\" width=\"%d\" height=\"360\" role=\"img\" aria-label=\"parallel coordinates of %d trials\"></canvas>", w, len(d.IDs))
	for _, layer := range []string{"all", "kept", "ranges"} {
		sc.p.printf("<canvas class=\"%s\" width=\"%d\" height=\"360\" aria-hidden=\"true\"></canvas>", layer, w)
	}
	sc.p.printf("</div>\n")
	sc.p.printf("<p class=\"note\"><span class=\"key ramp\"></span>finished, coloured by the objective from the worst to the best <span class=\"key running\"></span>running (its value so far) " +
		"<span class=\"key pruned\"></span>pruned (or ended with no value), dashed <span class=\"key paused\"></span>paused, dashed <span class=\"key failed\"></span>failed, dashed; " +
		"the trials waiting are not drawn until they start</p>\n")
	sc.dataBlock("plot-data", d)
	sc.p.printf("</section>\n")
}

// contour is the objective over a pair of parameters, chosen on the page (first the two
// most important for the first objective, else the first two), interpolated between the
// trials that succeeded.
func (sc studyCharts) contour() {
	objs := sc.p.run.AllObjectives()
	if len(sc.p.params) < 2 || (len(objs) == 0 && sc.p.focus == "") {
		return
	}
	metric := sc.p.focus
	if len(objs) > 0 {
		metric = objs[0].Metric
	}
	pair := sc.contourPair(metric)
	sc.p.printf("<section id=\"contour\">\n<h2>%s over two hyperparameters</h2>\n", esc(metric))
	sc.p.printf("<p class=\"note\">The value between the trials that succeeded, interpolated (each place weighted by the inverse square of its distance to each trial, on the axes as drawn); the dots are the trials. Choose the pair:\n")
	for i, axis := range []string{"x", "y"} {
		sc.p.printf("<label>%s <select class=\"c%s\">", axis, axis)
		for _, k := range sc.p.params {
			sel := ""
			if k == pair[i] {
				sel = " selected=\"\""
			}
			sc.p.printf("<option value=\"%s\"%s>%s</option>", esc(k), sel, esc(k))
		}
		sc.p.printf("</select></label>\n")
	}
	sc.p.printf("</p>\n<canvas class=\"contour\" width=\"520\" height=\"380\" role=\"img\" aria-label=\"%s over two hyperparameters\"></canvas>\n</section>\n", esc(metric))
}

// contourPair is the two parameters drawn first: the two most important for metric, where
// results.json has them, else the first two.
func (sc studyCharts) contourPair(metric string) [2]string {
	pair := [2]string{sc.p.params[0], sc.p.params[1]}
	imp, ok := sc.p.run.Importance[metric]
	if !ok || len(imp.Params) < 2 {
		return pair
	}
	var top []string
	for _, q := range imp.Params {
		if len(top) < 2 && slices.Contains(sc.p.params, q.Name) {
			top = append(top, q.Name)
		}
	}
	if len(top) == 2 {
		pair = [2]string{top[0], top[1]}
	}
	return pair
}
