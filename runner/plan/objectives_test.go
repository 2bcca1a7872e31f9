package plan

import (
	"strings"
	"testing"
)

// config objective takes a list of {metric, mode}: every one is kept, in order, and the
// first is Objective; a list that is empty or names a metric twice is refused with its place.
func TestObjectivesList(t *testing.T) {
	text := "config:\n  objective:\n    - {metric: val_accuracy, mode: max}\n    - {metric: latency_ms, mode: min}\ntasks:\n  - cmd: train\n"
	p, err := loadYAML(t, text, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Config.Objectives
	if len(got) != 2 || got[0] != (Objective{Metric: "val_accuracy", Mode: "max"}) || got[1] != (Objective{Metric: "latency_ms", Mode: "min"}) {
		t.Fatalf("objectives %+v", got)
	}
	if p.Config.Objective == nil || *p.Config.Objective != got[0] {
		t.Fatalf("objective %+v, want the first", p.Config.Objective)
	}
	one, err := loadYAML(t, "config:\n  objective: {metric: loss, mode: min}\ntasks:\n  - cmd: train\n", LoadOptions{})
	if err != nil || len(one.Config.Objectives) != 1 || one.Config.Objective.Metric != "loss" {
		t.Fatalf("one objective: %+v, %v", one.Config.Objectives, err)
	}
	for _, c := range []struct{ objective, want string }{
		{"[]", "objective: the list is empty"},
		{"[{metric: a, mode: max}, {metric: a, mode: min}]", "objective: item 2: metric a is already item 1: list each metric once"},
		{"[{metric: a, mode: max}, {metric: b}]", "objective: item 2: mode: missing"},
		{"[{metric: a, mode: up}]", "objective: item 1: mode: want max or min"},
		{"[val_accuracy]", "objective: item 1: want a mapping such as {metric: val_accuracy, mode: max}"},
	} {
		_, err := loadYAML(t, "config:\n  objective: "+c.objective+"\ntasks:\n  - cmd: train\n", LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("objective: %s: got %v, want %q", c.objective, err, c.want)
		}
	}
}

// Early stopping compares one metric: under several objectives it takes none by default,
// and takes the mode of the one its metric: names.
func TestEarlyStopUnderSeveralObjectives(t *testing.T) {
	for _, tc := range []struct {
		early, problem, wantMode string
	}{
		{"{method: asha}", "early-stop: metric: missing: config objective lists several metrics (val_accuracy, latency_ms), so early stopping takes none of them: name the one it compares in early-stop: metric:", ""},
		{"{method: asha, metric: latency_ms}", "", "min"},
		{"{method: asha, metric: val_accuracy}", "", "max"},
		{"{method: asha, metric: val_loss}", "early-stop: mode: missing: val_loss is none of the objectives' metrics (val_accuracy, latency_ms)", ""},
		{"{method: asha, metric: latency_ms, mode: max}", "early-stop: mode: max contradicts the objective's mode min for the same metric latency_ms", ""},
	} {
		text := "config:\n  objective: [{metric: val_accuracy, mode: max}, {metric: latency_ms, mode: min}]\n" +
			"tasks:\n  - name: sweep\n    parallel-tasks: [{cmd: train}]\n    early-stop: " + tc.early + "\n"
		p, err := loadYAML(t, text, LoadOptions{})
		switch {
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
			t.Errorf("early-stop %s: got %v, want %q", tc.early, err, tc.problem)
		case tc.problem == "" && err != nil:
			t.Errorf("early-stop %s: %v", tc.early, err)
		case tc.problem == "" && p.Tasks[0].EarlyStop.Mode != tc.wantMode:
			t.Errorf("early-stop %s: mode %q, want %q", tc.early, p.Tasks[0].EarlyStop.Mode, tc.wantMode)
		}
	}
}
