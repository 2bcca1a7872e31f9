package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestLineage (issue 27, point 4): the report shows each pbt trial's lineage: at which step
// it continued from which trial's checkpoint, with which values; no section without one.
func TestLineage(t *testing.T) {
	run := &results.Run{Objective: &results.Objective{Metric: "acc", Mode: "max"}, Tasks: []results.Task{
		{Name: "lr=0.1", Status: results.StatusOK, Metrics: map[string]float64{"acc": 0.9}},
		{Name: "lr=0.001", Status: results.StatusOK, Metrics: map[string]float64{"acc": 0.88},
			Lineage: []results.Exploit{{Step: 9, From: "lr=0.1", Value: 0.61, Params: map[string]string{"lr": "0.08", "alpha": "0.01"}}}},
	}}
	var b bytes.Buffer
	if err := Write(&b, Input{Run: run}); err != nil {
		t.Fatal(err)
	}
	want := "<tr><td>lr=0.001</td><td class=\"num\">9</td><td>lr=0.1</td><td class=\"num\">0.61</td><td>alpha=0.01 lr=0.08</td></tr>"
	if !strings.Contains(b.String(), "<h2>Lineage</h2>") || !strings.Contains(b.String(), want) {
		t.Errorf("the report does not show the lineage %q", want)
	}
	run.Tasks[1].Lineage = nil
	b.Reset()
	if err := Write(&b, Input{Run: run}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Lineage") {
		t.Error("a lineage section without any exploit")
	}
}
