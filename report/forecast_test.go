package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestForecastBand (issue 47, point 4): the curves draw a trial's last forecast of early-stop
// method forecast: its band at the step forecast, coloured by the decision, with its
// figures; the chart reaches that step though no trial got there; none without a forecast.
func TestForecastBand(t *testing.T) {
	inc := 0.83
	run := &results.Run{Objective: &results.Objective{Metric: "acc", Mode: "max"}, Tasks: []results.Task{
		{ID: 1, Name: "best", Status: results.StatusOK, Metrics: map[string]float64{"acc": 0.83}, MetricSeries: map[string][]float64{"acc": {0.5, 0.7, 0.83}}},
		{ID: 2, Name: "loser", Status: results.StatusPruned, Reason: "stopped: forecast: ...", Metrics: map[string]float64{"acc": 0.6},
			MetricSeries: map[string][]float64{"acc": {0.4, 0.5, 0.55, 0.6}},
			Forecasts:    []results.Forecast{{Step: 4, At: 12, Median: 0.65, Low: 0.62, High: 0.67, Chance: 0.001, Incumbent: &inc, IncumbentFrom: "reached", Decision: "stop"}}},
	}}
	var b bytes.Buffer
	if err := Write(&b, Input{Run: run}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	want := "<title>loser: at epoch 4 forecast to end at 0.65 (90% band 0.62 to 0.67) at epoch 12; chance 0.001 of ending better than 0.83: stop</title>"
	if !strings.Contains(html, `<g class="forecast stop">`) || !strings.Contains(html, want) {
		t.Errorf("the curves do not draw the forecast %q", want)
	}
	if !strings.Contains(html, ">11</text>") { // ticks at 1, 3, ... 11: past the curves, which end at 4
		t.Error("the epoch axis does not reach towards the step forecast, 12")
	}
	run.Tasks[1].Forecasts = nil
	b.Reset()
	if err := Write(&b, Input{Run: run}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `class="forecast`) {
		t.Error("a forecast drawn without one")
	}
}
