package report

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// Two objectives: the importance bars are results.json's, objective by objective, most
// important first; the front chart holds every trial with a front, by its front.
func TestReportImportanceAndFront(t *testing.T) {
	in := sweep(40, 2, 3)
	run := in.Run
	run.Objectives = []results.Objective{{Metric: "val_accuracy", Mode: "max"}, {Metric: "latency", Mode: "min"}}
	for i := range run.Tasks {
		if lr, err := strconv.Atoi(run.Tasks[i].Params["lr"]); err == nil {
			run.Tasks[i].Metrics["latency"] = float64(lr*lr + i%3)
		}
	}
	run.Assess()
	els := parse(t, write(t, in))
	bars := map[string][]string{} // metric → params, in order
	fronts := map[string]string{}
	figure := ""
	for _, e := range els {
		switch {
		case e.name == "figure":
			figure = e.attrs["data-metric"]
		case e.name == "rect" && e.attrs["class"] == "imp":
			bars[figure] = append(bars[figure], e.attrs["data-param"]+"="+e.attrs["data-importance"])
		case e.name == "circle" && e.attrs["data-front"] != "":
			fronts[e.attrs["data-task"]] = e.attrs["data-front"]
		}
	}
	for _, m := range []string{"val_accuracy", "latency"} {
		var want []string
		for _, p := range run.Importance[m].Params {
			want = append(want, p.Name+"="+strconv.FormatFloat(p.Importance, 'g', -1, 64))
		}
		if len(want) != 2 || !slices.Equal(bars[m], want) {
			t.Errorf("%s: bars %v, want %v", m, bars[m], want)
		}
	}
	ranked := 0
	for _, tr := range run.Tasks {
		if tr.ParetoRank == 0 {
			continue
		}
		ranked++
		if got := fronts[strconv.Itoa(tr.ID)]; got != strconv.Itoa(tr.ParetoRank) {
			t.Errorf("%s: drawn on front %q, its front is %d", tr.Name, got, tr.ParetoRank)
		}
	}
	if ranked == 0 || len(fronts) != ranked {
		t.Errorf("%d points on the front chart, %d trials with a front", len(fronts), ranked)
	}

	page := string(write(t, in))
	if !strings.Contains(page, `<th data-key="front">Front</th>`) || !strings.Contains(page, "Sorted by Pareto front of val_accuracy (max) and latency (min)") {
		t.Errorf("the table has no Front column, or does not say how it is sorted")
	}

	// One objective: the bars, and no front chart.
	one := sweep(40, 2, 3)
	one.Run.Assess()
	page = string(write(t, one))
	if !strings.Contains(page, `id="importance"`) || strings.Contains(page, `id="front"`) {
		t.Errorf("one objective: want the importance and no front")
	}
}
