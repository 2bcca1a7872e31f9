package report

import (
	"strconv"

	"github.com/runall/runall/runner/results"
)

// A large sweep's curves are drawn on a canvas by the script (curveScript) from a block
// of data, thinned as the SVG's are: 10,000 polylines are 3 MB of page whose marks a
// browser lays out, and restyles at each brushing, in seconds.

// curveCanvas writes the canvas of the curves of the tasks drawn (ranked, best first), and
// their points in the chart's pixels, rounded to a tenth as the SVG's are.
func (cc curveCharts) curveCanvas(drawn []int, m string, xs, ys scale, limit int) {
	const w, h = 760, 320
	// The frame is the SVG charts' own; the canvas lies over it.
	cc.p.printf("<div class=\"layered\"><svg class=\"curves\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", w, h, w, h)
	cc.p.frame(w, h, xs, ys, "epoch", m, epochTicks(int(xs.hi)), func(v float64) string { return strconv.Itoa(int(v)) })
	cc.p.printf("</svg><canvas class=\"curves\" width=\"%d\" height=\"%d\" aria-label=\"%s per epoch, %d trials\"></canvas></div>\n", w, h, esc(m), len(drawn))
	b := []byte(`{"ids":[`)
	for n, i := range drawn {
		if n > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(cc.p.run.Tasks[i].ID), 10)
	}
	b = append(b, `],"kind":[`...)
	for n, i := range drawn {
		if n > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, cc.curveKind(cc.p.run.Tasks[i]))
	}
	b = append(b, `],"xy":[`...)
	for n, i := range drawn {
		if n > 0 {
			b = append(b, ',')
		}
		b = cc.curveXY(b, cc.p.run.Tasks[i], m, xs, ys, limit)
	}
	cc.p.printf("<script type=\"application/json\" id=\"curve-data\">%s]}</script>\n</section>\n", b)
}

// curveKind is how a curve is drawn: the best's thick, a pruned one's dashed.
func (cc curveCharts) curveKind(t results.Task) string {
	switch {
	case cc.p.run.IsBest(t):
		return "best"
	case t.Status == results.StatusPruned:
		return "pruned"
	case t.Status == results.StatusRunning:
		return "running"
	}
	return "line"
}

// curveXY appends a task's points as a flat list: x, y, x, y…
func (cc curveCharts) curveXY(b []byte, t results.Task, m string, xs, ys scale, limit int) []byte {
	s := t.MetricSeries[m]
	if len(s) == 0 {
		s = []float64{t.Metrics[m]}
	}
	b = append(b, '[')
	for n, e := range thinCurve(len(s), limit, func(i int) float64 { return s[i] }) {
		if n > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, round1(xs.at(float64(e+1))), 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, round1(ys.at(s[e])), 'f', -1, 64)
	}
	return append(b, ']')
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
