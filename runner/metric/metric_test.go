package metric

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestLines(t *testing.T) {
	var s Set
	for _, l := range []string{
		"epoch 1 done",
		"runall-metric loss=0.9 acc=0.5",
		"  runall-metric loss=0.5\tacc=0.75 lr=1e-3",
		"runall-metricx=1",            // not a metric line
		"see runall-metric loss=9",    // nor is this: the marker starts the line
		"runall-metric acc=high",      // a warning, acc keeps 0.75
		"runall-metric loss=NaN",      // a warning
		"runall-metric =1 val/acc=.8", // a warning for =1, val/acc kept
		"runall-metric",
	} {
		s.Line(l)
	}
	last, series, warnings := s.Result()
	want := map[string]float64{"loss": 0.5, "acc": 0.75, "lr": 1e-3, "val/acc": 0.8}
	if !maps.Equal(last, want) {
		t.Errorf("last %v, want %v", last, want)
	}
	if !slices.Equal(series["loss"], []float64{0.9, 0.5}) || !slices.Equal(series["acc"], []float64{0.5, 0.75}) || series["lr"] != nil {
		t.Errorf("series %v", series)
	}
	if len(warnings) != 4 || !strings.Contains(warnings[0], `acc: "high" is not a finite number`) ||
		!strings.Contains(warnings[1], `loss: "NaN"`) || !strings.Contains(warnings[2], `"=1"`) || !strings.Contains(warnings[3], "no NAME=VALUE") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestFile(t *testing.T) {
	tests := []struct {
		name, data string
		last       map[string]float64
		series     map[string][]float64
		warn       []string // substrings, one per warning
	}{
		{"numbers and lists", `{"val_accuracy": [0.5, 0.7, 0.8], "loss": 0.25, "epochs": [3]}`,
			map[string]float64{"val_accuracy": 0.8, "loss": 0.25, "epochs": 3},
			map[string][]float64{"val_accuracy": {0.5, 0.7, 0.8}}, nil},
		{"python NaN", `{"loss": [1.0, NaN, 0.5], "acc": NaN, "note": "NaN in a string"}`,
			map[string]float64{"loss": 0.5}, map[string][]float64{"loss": {1, 0.5}},
			[]string{"acc: null, NaN or Infinity", "loss: 1 of 3 values", `note: want a number or a list of numbers, got "NaN in a string"`}},
		{"bad JSON", `{"loss": 0.5,`, nil, nil, []string{"not a JSON object of metrics"}},
		{"not an object", `[1, 2]`, nil, nil, []string{"not a JSON object of metrics"}},
		{"nested and empty", `{"a": {"b": 1}, "c": [], "d e": 1, "f": [1, "x"]}`, nil, nil,
			[]string{"a: want a number", "c: no number in the list", `"d e" is not a metric name`, "f: want a number"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Set
			s.File("m.json", []byte(tc.data))
			last, series, warnings := s.Result()
			if !maps.Equal(last, tc.last) {
				t.Errorf("last %v, want %v", last, tc.last)
			}
			if !maps.EqualFunc(series, tc.series, slices.Equal) {
				t.Errorf("series %v, want %v", series, tc.series)
			}
			if len(warnings) != len(tc.warn) {
				t.Fatalf("warnings %q, want %d", warnings, len(tc.warn))
			}
			for i, w := range tc.warn {
				if !strings.Contains(warnings[i], w) || !strings.Contains(warnings[i], "m.json") {
					t.Errorf("warning %q, want it to name m.json and say %q", warnings[i], w)
				}
			}
		})
	}
}

// TestFileAfterLines: the file's number is the latest value, a list replaces the series.
func TestFileAfterLines(t *testing.T) {
	var s Set
	s.Line("runall-metric acc=0.1 loss=3")
	s.Line("runall-metric acc=0.2 loss=2")
	s.File("m.json", []byte(`{"acc": 0.9, "loss": [5, 4, 1]}`))
	last, series, _ := s.Result()
	if last["acc"] != 0.9 || last["loss"] != 1 || !slices.Equal(series["acc"], []float64{0.1, 0.2}) || !slices.Equal(series["loss"], []float64{5, 4, 1}) {
		t.Errorf("last %v series %v", last, series)
	}
}

func TestWarningsBounded(t *testing.T) {
	var s Set
	for range 100 {
		s.Line("runall-metric x=bad")
	}
	if _, _, w := s.Result(); len(w) != maxWarnings+1 || !strings.Contains(w[maxWarnings], "left out") {
		t.Errorf("%d warnings, last %q", len(w), w[len(w)-1])
	}
}
