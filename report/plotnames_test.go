package report

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/runall/runall/runner/results"
)

// hostileParams are parameter names a sampler may hand out: a quote, a backslash, the
// start of an end tag, and characters esc replaces (a backspace, U+202E).
var hostileParams = map[string]string{"lr": `l"r`, "wd": `w\d`, "bs": "</bs", "opt": "o\bpt\u202e"}

// renamed is tasks with their parameters renamed by hostileParams.
func renamed(tasks []results.Task) {
	for i, t := range tasks {
		if t.Params == nil {
			continue
		}
		params := map[string]string{}
		for k, v := range t.Params {
			params[hostileParams[k]] = v
		}
		tasks[i].Params = params
	}
}

// TestPlotAxesAsThePageReadsThem (issue 42, point 7): the script finds the contour's pair
// and a scatter canvas's parameter by the name the page holds in an option's value or a
// data-param, as the browser reads it; each must name an axis of the plot data, whatever
// the name holds. A name with a character esc replaces named none, and the contour was
// blank.
func TestPlotAxesAsThePageReadsThem(t *testing.T) {
	small := plotPage()
	renamed(small.run.Tasks)
	large := sweep(scatterMarks+1, 2, 3)
	for i := range large.Run.Tasks {
		if i > 0 {
			large.Run.Tasks[i].Params = map[string]string{"lr": "0.1", "opt": []string{"sgd", "adam"}[i%2]}
		}
	}
	renamed(large.Run.Tasks)
	for _, in := range []Input{{Run: small.run}, large} {
		var axes []string
		var named []string // what the script looks up: option values, data-param of canvases
		for _, e := range parse(t, write(t, in)) {
			switch {
			case e.name == "script" && e.attrs["id"] == "plot-data":
				var d plotData
				if err := json.Unmarshal([]byte(e.text), &d); err != nil {
					t.Fatal(err)
				}
				for _, ax := range d.Axes {
					axes = append(axes, ax.Name)
				}
			case e.name == "option", e.name == "canvas" && e.attrs["data-param"] != "":
				named = append(named, e.attrs["value"]+e.attrs["data-param"])
			}
		}
		if len(named) < 4 {
			t.Fatalf("%d names to look up, want the contour's options or the scatter canvases", len(named))
		}
		for _, n := range named {
			if !slices.Contains(axes, n) {
				t.Errorf("the page looks up %q, which names no axis of the plot data (%q)", n, axes)
			}
		}
	}
}
