package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/results"
)

// The charts of the focus metric (the objective's, else the first reported): its curve per
// epoch for every trial that reported it more than once, and its final value against each
// hyperparameter.

const (
	chartPadL, chartPadR, chartPadT, chartPadB = 56, 12, 12, 34
)

// scale maps values in [lo, hi] onto pixels [p0, p1]; log scales take logarithms first.
type scale struct {
	lo, hi, p0, p1 float64
	log            bool
}

func (s scale) at(v float64) float64 {
	lo, hi := s.lo, s.hi
	if s.log {
		v, lo, hi = math.Log10(v), math.Log10(lo), math.Log10(hi)
	}
	if hi == lo {
		return (s.p0 + s.p1) / 2
	}
	return s.p0 + (v-lo)/(hi-lo)*(s.p1-s.p0)
}

// ticks are about n round values within the scale.
func (s scale) ticks(n int) []float64 {
	if s.log {
		var out []float64
		for e := math.Floor(math.Log10(s.lo)); e <= math.Ceil(math.Log10(s.hi)); e++ {
			if v := math.Pow(10, e); v >= s.lo*0.999 && v <= s.hi*1.001 {
				out = append(out, v)
			}
		}
		return out
	}
	if s.hi == s.lo {
		return []float64{s.lo}
	}
	raw := (s.hi - s.lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	var out []float64
	for v := math.Ceil(s.lo/step) * step; v <= s.hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// padded is [lo, hi] widened by 5% each way, so that points do not sit on the frame.
func padded(lo, hi float64) (float64, float64) {
	if lo == hi {
		d := math.Max(math.Abs(lo)*0.05, 1e-9)
		return lo - d, hi + d
	}
	d := (hi - lo) * 0.05
	return lo - d, hi + d
}

// frame draws a chart's axes, ticks and labels.
func (p *page) frame(w, h float64, xs, ys scale, xLabel, yLabel string, xTicks []float64, xText func(float64) string) {
	p.printf("<line class=\"axis\" x1=\"%d\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\"/>", chartPadL, w-chartPadR, h-chartPadB, h-chartPadB)
	p.printf("<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.0f\"/>\n", chartPadL, chartPadL, chartPadT, h-chartPadB)
	for _, v := range ys.ticks(5) {
		y := ys.at(v)
		p.printf("<line class=\"grid\" x1=\"%d\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			chartPadL, w-chartPadR, y, y, chartPadL-4, y+4, formatNum(v))
	}
	for _, v := range xTicks {
		x := xs.at(v)
		p.printf("<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\"/><text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
			x, x, h-chartPadB, h-chartPadB+4, x, h-chartPadB+16, esc(xText(v)))
	}
	p.printf("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", (chartPadL+w-chartPadR)/2, h-4, esc(xLabel))
	p.printf("<text x=\"12\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 12 %.0f)\">%s</text>\n", (h-chartPadB)/2, (h-chartPadB)/2, esc(yLabel))
}

// curves draws the focus metric per epoch: one line per trial that reported it more than
// once, the best one on top, and a point for each that reported it once (pruned at its first
// epoch, or just started). Each line is drawn from at most curveLimit points.
func (cc curveCharts) curves() {
	m := cc.p.focus
	cc.p.printf("<section id=\"curves\">\n<h2>%s per epoch</h2>\n", esc(cmpOr(m, "Metrics")))
	var lines, points []int
	lo, hi, longest := math.Inf(1), math.Inf(-1), 1
	for _, i := range cc.p.order {
		t := cc.p.run.Tasks[i]
		s := t.MetricSeries[m]
		if len(s) == 0 {
			v, ok := t.Metrics[m]
			if !ok {
				continue
			}
			s = []float64{v}
		}
		if len(s) == 1 {
			points = append(points, i)
		} else {
			lines = append(lines, i)
		}
		lo, hi, longest = math.Min(lo, slices.Min(s)), math.Max(hi, slices.Max(s)), max(longest, len(s))
		longest, lo, hi = forecastRange(t, longest, lo, hi)
	}
	if len(lines) == 0 {
		cc.p.printf("<p class=\"note\">%s</p>\n</section>\n", esc(noSeries(m)))
		return
	}
	const w, h = 760.0, 320.0
	xs := scale{lo: 1, hi: float64(longest), p0: chartPadL + 6, p1: w - chartPadR - 6}
	lo, hi = padded(lo, hi)
	ys := scale{lo: lo, hi: hi, p0: h - chartPadB, p1: chartPadT}
	limit := curveLimit(len(lines))
	cc.p.printf("<p class=\"note\">%s</p>\n", curvesNote(len(lines), len(points), longest > limit, limit))
	if len(lines)+len(points) > scatterMarks {
		cc.curveCanvas(slices.Concat(points, lines), m, xs, ys, limit)
		return
	}
	cc.p.printf("<svg class=\"curves\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n", w, h, w, h)
	cc.p.frame(w, h, xs, ys, "epoch", m, epochTicks(longest), func(v float64) string { return strconv.Itoa(int(v)) })
	drawn := slices.Concat(points, lines)
	slices.Reverse(drawn) // the best last, drawn over the others
	for _, i := range drawn {
		cc.curve(cc.p.run.Tasks[i], m, xs, ys, limit)
	}
	cc.p.printf("</svg>\n</section>\n")
}

// A curve is drawn from at most curvePoints points, and all of them from about curveBudget:
// a thousand trials of a hundred epochs are 100,000 points, which a browser that follows the
// run would draw again every second, and which no screen shows (a chart is 700 pixels wide).
const (
	curvePoints = 200
	curveBudget = 20000
)

// curveLimit is the most points each of n curves is drawn from.
func curveLimit(n int) int {
	return min(curvePoints, max(16, curveBudget/max(n, 1)))
}

func curvesNote(lines, points int, thinned bool, limit int) string {
	note := fmt.Sprintf("One line per trial that reported it more than once (%d)", lines)
	if points > 0 {
		note += fmt.Sprintf(", a point at epoch 1 for each that reported it once (%d: pruned at its first epoch, or just started)", points)
	}
	note += "; the best trial's is drawn thick. Hover a line for its trial."
	if thinned {
		note += fmt.Sprintf(" Longer curves are drawn from %d of their points, their lowest and highest kept.", limit)
	}
	return note
}

// curve draws one trial's series of m (or its one value, as a point) from at most limit
// of its points.
func (cc curveCharts) curve(t results.Task, m string, xs, ys scale, limit int) {
	s := t.MetricSeries[m]
	if len(s) == 0 {
		s = []float64{t.Metrics[m]}
	}
	class, end := "curve", ""
	if cc.p.run.IsBest(t) {
		class += " best"
	}
	if rule := prunedBy(t); rule != "" {
		class += " pruned"
		end = fmt.Sprintf(" (pruned by %s at epoch %d)", rule, len(s))
	}
	title := fmt.Sprintf("<title>%s: %s%s</title>", esc(t.Name), formatNum(s[len(s)-1]), esc(end))
	if len(s) == 1 {
		cc.p.printf("<circle class=\"%s one\" data-task=\"%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\">%s</circle>\n", class, t.ID, xs.at(1), ys.at(s[0]), title)
		return
	}
	var pts strings.Builder
	for _, e := range thinCurve(len(s), limit, func(i int) float64 { return s[i] }) {
		fmt.Fprintf(&pts, "%.1f,%.1f ", xs.at(float64(e+1)), ys.at(s[e]))
	}
	cc.p.printf("<polyline class=\"%s\" data-task=\"%d\" points=\"%s\">%s</polyline>\n", class, t.ID, strings.TrimSpace(pts.String()), title)
	cc.resumeMarks(t, s, xs, ys)
	cc.donorParts(t, s, xs, ys)
	cc.forecastParts(t, s, xs, ys)
}

// thinCurve is the indexes of n values to draw, at most about limit: all of them when
// there are that few; else, per run of values, the lowest and the highest, in order, and
// always the first and the last.
func thinCurve(n, limit int, at func(int) float64) []int {
	if n <= limit {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	buckets := max(limit/2, 1)
	out := []int{0}
	for b := range buckets {
		from, to := b*n/buckets, (b+1)*n/buckets
		lo, hi := from, from
		for i := from; i < to; i++ {
			if at(i) < at(lo) {
				lo = i
			}
			if at(i) > at(hi) {
				hi = i
			}
		}
		for _, i := range []int{min(lo, hi), max(lo, hi)} {
			if i > out[len(out)-1] {
				out = append(out, i)
			}
		}
	}
	if out[len(out)-1] != n-1 {
		out = append(out, n-1)
	}
	return out
}

// resumeMarks marks where a trial resumed from its checkpoint on its curve: at the step its
// checkpoint held, the last value before the resumed attempt's first.
func (cc curveCharts) resumeMarks(t results.Task, s []float64, xs, ys scale) {
	for _, r := range t.Resumes {
		if r.Step < 1 || r.Step > len(s) {
			continue
		}
		cc.p.printf("<circle class=\"resumed\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>%s: resumed from its checkpoint at epoch %d (run %s)</title></circle>\n",
			xs.at(float64(r.Step)), ys.at(s[r.Step-1]), esc(t.Name), r.Step, esc(r.RunID))
	}
}

func noSeries(m string) string {
	if m == "" {
		return "No task reported metrics: give trials a metrics: file, or have them print runall-metric NAME=VALUE lines (docs/taskfile.md)."
	}
	return "No trial reported " + m + " per epoch: write it as a list in the metrics file, or print a runall-metric line after every epoch."
}

// epochTicks are at most about ten whole epochs.
func epochTicks(n int) []float64 {
	step := max(1, int(math.Ceil(float64(n)/10)))
	var out []float64
	for e := 1; e <= n; e += step {
		out = append(out, float64(e))
	}
	return out
}

// scatter draws the focus metric against each hyperparameter: numbers on a number line
// (logarithmic when they span two orders of magnitude or more), other values as categories.
func (sc studyCharts) scatter() {
	m := sc.p.focus
	sc.p.printf("<section id=\"params\">\n<h2>%s against each hyperparameter</h2>\n", esc(cmpOr(m, "Metrics")))
	if m == "" || len(sc.p.params) == 0 {
		note := "No task has hyperparameters: trials get them from matrix: or for-each."
		if m == "" {
			note = noSeries(m)
		}
		sc.p.printf("<p class=\"note\">%s</p>\n</section>\n", esc(note))
		return
	}
	sc.p.printf("<div class=\"charts\">\n")
	if n := len(sc.p.plotTrials()); n > scatterMarks {
		for _, k := range sc.p.params { // drawn by the script from the plot data
			sc.p.printf("<canvas class=\"scatter\" data-param=\"%s\" width=\"360\" height=\"240\" role=\"img\" aria-label=\"%s against %s, %d trials\"></canvas>\n", esc(k), esc(m), esc(k), n)
		}
		sc.p.printf("</div>\n</section>\n")
		return
	}
	for _, k := range sc.p.params {
		sc.scatterOne(k, m)
	}
	sc.p.printf("</div>\n</section>\n")
}

// scatterMarks is the most trials the scatter plots draw as marks of their own (SVG, each
// titled with its trial); more are drawn on canvases from the plot data: 10,000 trials of 8
// parameters are 80,000 marks, 10 MB of page and seconds of drawing.
const scatterMarks = 1000

// scatterPoint is one trial on a scatter plot.
type scatterPoint struct {
	t    results.Task
	x, y float64
}

// scatterOne draws m against one hyperparameter.
func (sc studyCharts) scatterOne(param, m string) {
	pts, cats, numeric, positive := sc.scatterPoints(param, m)
	if len(pts) == 0 {
		return
	}
	const w, h = 360.0, 240.0
	logSampled := positive && slices.Contains(sc.p.run.LogParams, param)
	xs, ticks, text := scatterXScale(param, pts, cats, numeric, positive, logSampled, w)
	lo, hi := pts[0].y, pts[0].y
	for _, q := range pts {
		lo, hi = math.Min(lo, q.y), math.Max(hi, q.y)
	}
	lo, hi = padded(lo, hi)
	ys := scale{lo: lo, hi: hi, p0: h - chartPadB, p1: chartPadT}
	sc.p.printf("<svg class=\"scatter\" data-param=\"%s\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n", esc(param), w, h, w, h)
	sc.p.frame(w, h, xs, ys, param, m, ticks, text)
	slices.Reverse(pts) // the best last, drawn over the others
	for _, q := range pts {
		class := "pt"
		switch {
		case sc.p.run.IsBest(q.t):
			class += " best"
		case q.t.Status == results.StatusRunning:
			class += " running" // its value so far
		case q.t.Status != results.StatusOK:
			class += " failed"
		}
		sc.p.printf("<circle class=\"%s\" data-task=\"%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%s: %s=%s, %s=%s</title></circle>\n",
			class, q.t.ID, xs.at(q.x), ys.at(q.y), esc(q.t.Name), esc(param), esc(q.t.Params[param]), esc(m), formatNum(q.y))
	}
	sc.p.printf("</svg>\n")
}

// scatterPoints are the trials that have both the hyperparameter and the metric, ranked;
// cats the hyperparameter's values; numeric and positive say whether they all are.
func (sc studyCharts) scatterPoints(param, m string) (pts []scatterPoint, cats []string, numeric, positive bool) {
	numeric, positive = true, true
	for _, i := range sc.p.order {
		t := sc.p.run.Tasks[i]
		v, ok := t.Metrics[m]
		pv, has := t.Params[param]
		if !ok || !has {
			continue
		}
		f, err := strconv.ParseFloat(pv, 64)
		numeric = numeric && err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
		positive = positive && f > 0
		if !slices.Contains(cats, pv) {
			cats = append(cats, pv)
		}
		pts = append(pts, scatterPoint{t: t, x: f, y: v})
	}
	return pts, cats, numeric, positive
}

// scatterXScale is the x axis: a number line (logarithmic when the values were sampled
// log-uniformly, or are positive and span two orders of magnitude) or, for other values,
// one place per value, sorted. It sets the points' x for categories.
func scatterXScale(param string, pts []scatterPoint, cats []string, numeric, positive, logSampled bool, w float64) (scale, []float64, func(float64) string) {
	if numeric {
		lo, hi := pts[0].x, pts[0].x
		for _, q := range pts {
			lo, hi = math.Min(lo, q.x), math.Max(hi, q.x)
		}
		xs := scale{lo: lo, hi: hi, p0: chartPadL + 14, p1: w - chartPadR - 14, log: logSampled || positive && hi/lo >= 100}
		ticks := xs.ticks(4)
		if xs.log && len(ticks) < 2 { // within a decade: the ends say where the points lie
			ticks = []float64{lo, hi}
		}
		return xs, ticks, formatNum
	}
	slices.Sort(cats)
	for i := range pts {
		pts[i].x = float64(slices.Index(cats, pts[i].t.Params[param]))
	}
	ticks := make([]float64, len(cats))
	for i := range cats {
		ticks[i] = float64(i)
	}
	xs := scale{lo: 0, hi: float64(len(cats) - 1), p0: chartPadL + 20, p1: w - chartPadR - 20}
	return xs, ticks, func(v float64) string { return truncate(cats[int(v)], 14) }
}

// prunedBy is the early-stopping rule that pruned t (asha, median), "" when none did: its
// reason says "stopped: asha: ...".
func prunedBy(t results.Task) string {
	if t.Status != results.StatusPruned {
		return ""
	}
	_, rest, ok := strings.Cut(t.Reason, "stopped: ")
	rule, _, _ := strings.Cut(rest, ":")
	if !ok || rule == "" || strings.ContainsAny(rule, " ;") {
		return "early-stop"
	}
	return rule
}
