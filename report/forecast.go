package report

import (
	"fmt"
	"math"

	"github.com/runall/runall/runner/results"
)

// lastForecast is t's last decision of early-stop method forecast; false without one.
func lastForecast(t results.Task) (results.Forecast, bool) {
	if len(t.Forecasts) == 0 {
		return results.Forecast{}, false
	}
	f := t.Forecasts[len(t.Forecasts)-1]
	return f, f.At >= 1 && f.Step >= 1
}

// forecastRange widens the curves' chart to hold t's last forecast: the step forecast and
// the band there.
func forecastRange(t results.Task, longest int, lo, hi float64) (int, float64, float64) {
	f, ok := lastForecast(t)
	if !ok {
		return longest, lo, hi
	}
	return max(longest, f.At), math.Min(lo, f.Low), math.Max(hi, f.High)
}

// forecastParts draws t's last forecast beside its curve (early-stop forecast): a dashed
// line from its value at the step decided at to the median forecast at the step forecast,
// and the 90% band there as a bar, coloured by the decision and titled with its figures.
func (cc curveCharts) forecastParts(t results.Task, s []float64, xs, ys scale) {
	f, ok := lastForecast(t)
	if !ok || f.Step > len(s) {
		return
	}
	x0, y0, x1 := xs.at(float64(f.Step)), ys.at(s[f.Step-1]), xs.at(float64(f.At))
	beat := "nothing to beat yet"
	if f.Incumbent != nil {
		beat = fmt.Sprintf("chance %s of ending better than %s", formatNum(f.Chance), formatNum(*f.Incumbent))
	}
	cc.p.printf("<g class=\"forecast %s\"><line class=\"path\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line class=\"band\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"+
		"<title>%s: at epoch %d forecast to end at %s (90%% band %s to %s) at epoch %d; %s: %s</title></g>\n",
		esc(f.Decision), x0, y0, x1, ys.at(f.Median), x1, ys.at(f.Low), x1, ys.at(f.High),
		esc(t.Name), f.Step, formatNum(f.Median), formatNum(f.Low), formatNum(f.High), f.At, beat, esc(f.Decision))
}
