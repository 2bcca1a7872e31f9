package output

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// Two objectives: a column each and FRONT, the rows by front with the first marked; the
// closing lines give each objective's three most important parameters with their signs.
func TestSummarySeveralObjectives(t *testing.T) {
	r := &results.Run{Status: results.StatusOK, Objective: &results.Objective{Metric: "acc", Mode: "max"},
		Objectives: []results.Objective{{Metric: "acc", Mode: "max"}, {Metric: "latency", Mode: "min"}}}
	for i := range 60 {
		// acc is lr's alone (lr up, acc up); latency is layers' (more layers, slower)
		lr, layers, seed := float64(i%20)/20, (i*7)%11+1, (i*13)%17
		r.Tasks = append(r.Tasks, results.Task{ID: i + 1, Name: fmt.Sprintf("t%d", i), Status: results.StatusOK, Attempts: 1,
			Params:  map[string]string{"lr": strconv.FormatFloat(lr, 'g', -1, 64), "layers": strconv.Itoa(layers), "seed": strconv.Itoa(seed)},
			Metrics: map[string]float64{"acc": lr, "latency": float64(layers)}})
	}
	r.Assess()
	var buf bytes.Buffer
	WriteSummary(&buf, r, SummaryOptions{Width: 120})
	out := buf.String()
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "ACC") || !strings.Contains(lines[0], "LATENCY") || !strings.Contains(lines[0], "FRONT") {
		t.Fatalf("head %q", lines[0])
	}
	// the first row: the best acc (0.95) at its least latency, on the first front, marked
	if !strings.Contains(lines[1], "0.95 (best)") || !strings.Contains(lines[1], "1 (first)") {
		t.Errorf("first row %q", lines[1])
	}
	for _, want := range []string{
		"\nImportance for acc (PED-ANOVA, top 10% of 60 trials): lr ",
		"\nImportance for latency (PED-ANOVA, top 10% of 60 trials): layers ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "lr 0.") || !strings.Contains(out, "(+)") {
		t.Errorf("want lr's share and its sign +:\n%s", out)
	}
	if i, j := strings.Index(out, "Importance for"), strings.Index(out, "Summary:"); i < 0 || i > j {
		t.Errorf("importance not in the closing lines:\n%s", out)
	}
}

// Too few trials: the summary says so rather than give importances.
func TestSummaryImportanceTooFew(t *testing.T) {
	r := &results.Run{Status: results.StatusOK, Objective: &results.Objective{Metric: "acc", Mode: "max"},
		Tasks: []results.Task{{ID: 1, Name: "t", Status: results.StatusOK, Params: map[string]string{"lr": "0.1"}, Metrics: map[string]float64{"acc": 1}}}}
	r.Assess()
	var buf bytes.Buffer
	WriteSummary(&buf, r, SummaryOptions{})
	if !strings.Contains(buf.String(), "too few trials: 1 finished with a value, PED-ANOVA needs at least 2") {
		t.Errorf("summary:\n%s", buf.String())
	}
}
