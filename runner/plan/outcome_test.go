package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/taskfile"
)

func TestLoadStopWhen(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want Condition // zero: an error at tasks.yml:1:21
	}{
		{"val_accuracy >= 0.9", Condition{Metric: "val_accuracy", Op: ">=", Value: 0.9}},
		{"loss<0.05", Condition{Metric: "loss", Op: "<", Value: 0.05}},
		{" epoch == 3 ", Condition{Metric: "epoch", Op: "==", Value: 3}},
		{"val/acc > -1e-3", Condition{Metric: "val/acc", Op: ">", Value: -1e-3}},
		{"acc <= 1", Condition{Metric: "acc", Op: "<=", Value: 1}},
		{">= 0.9", Condition{}},
		{"acc 0.9", Condition{}},
		{"acc >= ", Condition{}},
		{"acc >= NaN", Condition{}},
		{"acc >= Inf", Condition{}},
		{"acc != 1", Condition{}},
		{"acc >= 0.9 and loss < 1", Condition{}},
		{"a b >= 1", Condition{}},
	} {
		p, err := loadYAML(t, "config: {stop-when: \""+tc.expr+"\"}\ntasks: [{cmd: echo}]\n", LoadOptions{})
		if tc.want.Metric == "" {
			if err == nil || !strings.HasPrefix(err.Error(), "tasks.yml:1:21: stop-when: ") {
				t.Errorf("%q: got %v, want an error at tasks.yml:1:21", tc.expr, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		got := *p.Config.StopWhen
		got.Text = ""
		if got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.expr, got, tc.want)
		}
	}
}

func TestConditionMet(t *testing.T) {
	for _, tc := range []struct {
		op   string
		v    float64
		want bool
	}{{">=", 0.9, true}, {">=", 0.89, false}, {">", 0.9, false}, {">", 0.91, true}, {"<=", 0.9, true},
		{"<", 0.9, false}, {"==", 0.9, true}, {"==", 0.91, false}} {
		if got := (Condition{Metric: "m", Op: tc.op, Value: 0.9}).Met(tc.v); got != tc.want {
			t.Errorf("%v %s 0.9: got %v", tc.v, tc.op, got)
		}
	}
}

// TestLoadMetricsAndParams: metrics: and a block's matrix values pass to its trials and
// their steps; a trial's own metrics: wins.
func TestLoadMetricsAndParams(t *testing.T) {
	p := mustLoadYAML(t, `
config:
  objective: {metric: loss, mode: min}
  notify: {url: "${HOOK}"}
tasks:
  - name: sweep <opt>
    matrix: {opt: [sgd]}
    metrics: m-<opt>.json
    parallel-tasks:
      - name: t <lr>
        cmd: echo
        matrix: {lr: ["0.1"]}
      - name: steps
        metrics: own.json
        tasks:
          - cmd: train
          - cmd: eval
`, LoadOptions{})
	if o := p.Config.Objective; o == nil || *o != (Objective{Metric: "loss", Mode: "min"}) {
		t.Errorf("objective %+v", o)
	}
	if n := p.Config.Notify; n == nil || n.URL != "${HOOK}" || n.Timeout != taskfile.DefaultNotifyTimeout {
		t.Errorf("notify %+v", n)
	}
	trial, steps := p.Tasks[0].Parallel[0], p.Tasks[0].Parallel[1]
	if trial.Metrics != "m-sgd.json" || !slices.Equal(trial.Params, []Param{{Name: "opt", Value: "sgd"}, {Name: "lr", Value: "0.1"}}) {
		t.Errorf("trial: metrics %q params %v", trial.Metrics, trial.Params)
	}
	for _, s := range steps.Steps {
		if s.Metrics != "own.json" || !slices.Equal(s.Params, []Param{{Name: "opt", Value: "sgd"}}) {
			t.Errorf("step %q: metrics %q params %v", s.Name, s.Metrics, s.Params)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.example.com/services/T0/B0/XXXX": "https://hooks.example.com/…",
		"http://127.0.0.1:8080":                         "http://127.0.0.1:8080",
		"http://u:secret@host/x?token=abc":              "http://host/…",
		"${HOOK_URL}":                                   "${HOOK_URL}",
		"::bad":                                         "(a URL)",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
