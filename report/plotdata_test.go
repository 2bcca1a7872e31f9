package report

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/importance"
	"github.com/runall/runall/runner/results"
)

// plotPage is a page of five trials (and a setup step, which has no parameters): lr
// sampled log-uniformly within a decade, wd spanning three, bs within one, opt a choice;
// one trial lacks wd; one is pruned, one paused, one running; two objectives.
func plotPage() *page {
	run := &results.Run{Objectives: []results.Objective{{Metric: "acc", Mode: "max"}, {Metric: "ms", Mode: "min"}},
		LogParams: []string{"lr"}}
	run.Objective = &run.Objectives[0]
	run.Tasks = append(run.Tasks, results.Task{ID: 1, Name: "setup", Status: results.StatusOK})
	for i, st := range []results.Status{results.StatusOK, results.StatusPruned, results.StatusPaused, results.StatusRunning, results.StatusOK} {
		t := results.Task{ID: i + 2, Name: "t" + string(rune('a'+i)), Status: st,
			Params:  map[string]string{"lr": []string{"0.001", "0.002", "0.004", "0.006", "0.009"}[i], "wd": []string{"1e-05", "0.001", "0.01", "", "0.003"}[i], "bs": []string{"16", "32", "16", "64", "32"}[i], "opt": []string{"sgd", "adam", "sgd", "adamw", "adam"}[i]},
			Metrics: map[string]float64{"acc": 0.5 + float64(i)/10, "ms": float64(10 - i)}}
		if t.Params["wd"] == "" {
			delete(t.Params, "wd")
		}
		run.Tasks = append(run.Tasks, t)
	}
	run.SetBest()
	p := &page{run: run}
	p.order = run.Order()
	p.collectNames()
	return p
}

// TestPlotData: an axis per parameter and per objective; log axes for a parameter sampled
// so (though within a decade) and for one spanning decades, a number line for the others,
// categories (sorted, each trial at its index) for choices; a value missing is null; the
// setup step is no line; the lines are coloured by the first objective.
func TestPlotData(t *testing.T) {
	d := studyCharts{plotPage()}.plotData()
	type want struct{ scale, kind, mode string }
	wants := map[string]want{"lr": {"log", "param", ""}, "wd": {"log", "param", ""}, "bs": {"linear", "param", ""},
		"opt": {"cat", "param", ""}, "acc": {"linear", "objective", "max"}, "ms": {"linear", "objective", "min"}}
	if len(d.Axes) != len(wants) || len(d.IDs) != 5 {
		t.Fatalf("%d axes and %d trials, want %d and 5: %+v", len(d.Axes), len(d.IDs), len(wants), d)
	}
	at := map[string]plotAxis{}
	for _, ax := range d.Axes {
		at[ax.Name] = ax
		if w := wants[ax.Name]; ax.Scale != w.scale || ax.Kind != w.kind || ax.Mode != w.mode || len(ax.Values) != 5 {
			t.Errorf("axis %s: %s %s %q with %d values, want %+v", ax.Name, ax.Scale, ax.Kind, ax.Mode, len(ax.Values), w)
		}
	}
	if d.Axes[d.Color].Name != "acc" || d.Better != "max" {
		t.Errorf("coloured by axis %d (%s), %s best; want acc, max", d.Color, d.Axes[d.Color].Name, d.Better)
	}
	byID := map[int]int{}
	for i, id := range d.IDs {
		byID[id] = i
	}
	opt := at["opt"]
	if strings.Join(opt.Cats, ",") != "adam,adamw,sgd" || *opt.Values[byID[2]] != 2 || *opt.Values[byID[5]] != 1 || opt.Hi != 2 {
		t.Errorf("opt: categories %v, values of ta and td %v %v", opt.Cats, *opt.Values[byID[2]], *opt.Values[byID[5]])
	}
	if at["wd"].Values[byID[5]] != nil || at["wd"].Lo != 1e-05 || at["wd"].Hi != 0.01 {
		t.Errorf("wd: td's value %v (want none), from %g to %g", at["wd"].Values[byID[5]], at["wd"].Lo, at["wd"].Hi)
	}
	if got := strings.Join(d.Status, ","); d.Status[byID[3]] != "pruned" || d.Status[byID[4]] != "paused" || d.Status[byID[5]] != "running" {
		t.Errorf("statuses %s", got)
	}
	if d.Best != 6 || *at["acc"].Values[byID[6]] != 0.9 {
		t.Errorf("best %d, its acc %v", d.Best, *at["acc"].Values[byID[6]])
	}
}

// TestParcoordsSection: the section holds the plot data as JSON the page's script reads
// (the page still well-formed XML, a hostile name only text), and the contour starts from
// the two parameters most important for the first objective.
func TestParcoordsSection(t *testing.T) {
	p := plotPage()
	p.run.Tasks[1].Name = `</script><script>alert(1)</script>`
	p.run.Importance = map[string]importance.Result{"acc": {Params: []importance.Param{{Name: "opt"}, {Name: "wd"}, {Name: "lr"}}}}
	in := Input{Run: p.run}
	page := write(t, in)
	var data, x, y string
	for _, e := range parse(t, page) {
		if e.name == "script" && e.attrs["id"] == "plot-data" {
			data = e.text
		}
		if e.name == "select" && e.attrs["class"] == "cx" {
			x = selected(string(page), "cx")
		}
		if e.name == "select" && e.attrs["class"] == "cy" {
			y = selected(string(page), "cy")
		}
	}
	var d plotData
	if err := json.Unmarshal([]byte(data), &d); err != nil || len(d.IDs) != 5 || !slices.Contains(d.Names, `</script><script>alert(1)</script>`) {
		t.Errorf("plot data %v, %q", err, d.Names)
	}
	if strings.Contains(string(page), "<script>alert") {
		t.Errorf("the name ends the data's script element")
	}
	if x != "opt" || y != "wd" {
		t.Errorf("the contour starts from %s and %s, want opt and wd (the most important)", x, y)
	}
}

// selected is the option selected in the select of class c.
func selected(page, c string) string {
	m := regexp.MustCompile(`<select class="` + c + `">.*?<option value="([^"]*)" selected=""`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestLargeSweepOnCanvases: past scatterMarks trials the scatter plots and the curves are
// canvases drawn from data (a curve's points thinned as the SVG's are), and the table's
// rows past its first page are written hidden.
func TestLargeSweepOnCanvases(t *testing.T) {
	in := sweep(scatterMarks+1, 4, 300)
	page := string(write(t, in))
	parse(t, []byte(page))
	if n := strings.Count(page, `<canvas class="scatter"`); n != 2 || strings.Contains(page, `<svg class="scatter"`) {
		t.Errorf("%d scatter canvases, want 2 and no SVG", n)
	}
	m := regexp.MustCompile(`<script type="application/json" id="curve-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, `<canvas class="curves"`) || strings.Contains(page, "<polyline") {
		t.Fatalf("no curves canvas and data, or polylines still")
	}
	var d struct {
		IDs  []int       `json:"ids"`
		Kind []string    `json:"kind"`
		XY   [][]float64 `json:"xy"`
	}
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil || len(d.IDs) != scatterMarks+1 || len(d.XY) != len(d.IDs) || len(d.Kind) != len(d.IDs) {
		t.Fatalf("curve data: %v, %d ids, %d curves", err, len(d.IDs), len(d.XY))
	}
	limit := curveLimit(scatterMarks + 1)
	for i, xy := range d.XY {
		if want := len(thinCurve(300, limit, func(int) float64 { return 0 })); len(xy) > 2*(limit+2) || len(xy) < 4 {
			t.Fatalf("curve %d: %d numbers, want at most %d (%d points)", i, len(xy), 2*(limit+2), want)
		}
	}
	if got := strings.Count(page, `" hidden=""><td`); got != len(in.Run.Tasks)-pageRows {
		t.Errorf("%d rows written hidden, want %d", got, len(in.Run.Tasks)-pageRows)
	}
}
