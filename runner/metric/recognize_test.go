package metric

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	katib, err := CompilePattern(`(?P<name>[A-Za-z_]+)=(?P<value>\S+)`)
	if err != nil {
		t.Fatal(err)
	}
	perMetric, err := CompilePattern(`step \d+: train (?P<train_loss>\S+) / val (?P<val_loss>\S+)`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		formats Formats
		lines   []string
		want    []string // name@step=value, in the order recorded
		series  map[string][]float64
		warn    []string
	}{
		{name: "runall-metric lines",
			lines: []string{"runall-metric loss=0.5 acc=1e-1", "runall-metric loss=NaN", "runall-metric loss=-2.5E-3"},
			want:  []string{"loss@1=0.5", "acc@1=0.1", "loss@3=-0.0025"},
			warn:  []string{`loss: "NaN" is not a finite number`}},
		{name: "keras verbose=2, the tutorial's lines",
			lines: []string{"Epoch 1/2", "293/293 - 39s - loss: 0.6259 - accuracy: 0.6564 - val_loss: 0.6948 - val_accuracy: 0.5043",
				"Epoch 2/2", "293/293 - 38s - loss: 0.5 - accuracy: 0.7 - val_loss: 0.6 - val_accuracy: 0.61"},
			want: []string{"loss@1=0.6259", "accuracy@1=0.6564", "val_loss@1=0.6948", "val_accuracy@1=0.5043",
				"loss@2=0.5", "accuracy@2=0.7", "val_loss@2=0.6", "val_accuracy@2=0.61"}},
		{name: "keras 2 progress bar, last state only",
			lines: []string{"Epoch 1/1",
				"  1/293 [..............................] - ETA: 1:00 - loss: 0.9 - accuracy: 0.5\b\b\b\b\b",
				"293/293 [==============================] - ETA: 0s - loss: 0.63 - accuracy: 0.65\b\b\b",
				"293/293 [==============================] - 39s 133ms/step - loss: 0.6259 - accuracy: 0.6564 - val_loss: 0.6948 - val_accuracy: 0.5043"},
			want:   []string{"loss@1=0.63", "accuracy@1=0.65", "loss@1=0.6259", "accuracy@1=0.6564", "val_loss@1=0.6948", "val_accuracy@1=0.5043"},
			series: map[string][]float64{"loss": {0.6259}, "val_accuracy": {0.5043}}},
		{name: "keras progress bar drawn with backspaces on one line",
			lines: []string{"  1/10 [==>...] - ETA: 9s - loss: 2.0\b\b\b\b\b\b\b\b 10/10 [======] - 1s 10ms/step - loss: 1.5 - mae: 3e-2"},
			want:  []string{"loss@1=1.5", "mae@1=0.03"}},
		{name: "keras 3",
			lines: []string{"Epoch 1/2", "\x1b[1m293/293\x1b[0m", "293/293 ━━━━━━━━━━━━━━━━━━━━ 39s 133ms/step - accuracy: 0.6564 - loss: 0.6259",
				"Epoch 2/2", " 10/293 ━━━━━━━━━━━━━━━━━━━━ 30s 133ms/step - accuracy: 0.1 - loss: 0.9", "293/293 ━━━━━━━━━━━━━━━━━━━━ 39s 133ms/step - accuracy: 0.7 - loss: 0.5"},
			want: []string{"accuracy@1=0.6564", "loss@1=0.6259", "accuracy@2=0.7", "loss@2=0.5"}},
		{name: "keras nan is missing and takes its step",
			lines: []string{"Epoch 1/3", "5/5 - 1s - loss: nan", "Epoch 2/3", "5/5 - 1s - loss: 0.4", "Epoch 3/3", "5/5 - 1s - loss: inf"},
			want:  []string{"loss@2=0.4"},
			warn:  []string{"Keras epoch line: loss: nan recorded as missing", "Keras epoch line: loss: inf recorded as missing"}},
		{name: "old keras verbose=2",
			lines: []string{"Epoch 1/1", " - 39s - loss: 0.6 - acc: 0.7"},
			want:  []string{"loss@1=0.6", "acc@1=0.7"}},
		{name: "not keras",
			lines: []string{"INFO - loss: 0.5", "3/10 - loss: 0.5", "time 10/10 - loss: 0.5"}},
		{name: "hugging face trainer",
			lines: []string{"{'loss': 0.6931, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.5}",
				"{'eval_loss': 0.41, 'eval_accuracy': 0.83, 'eval_runtime': 1.5, 'epoch': 1.0}",
				"{'eval_loss': nan, 'eval_accuracy': 0.85, 'epoch': 2.0}",
				`{"eval_loss": -1.5e+2}`,
				"100%|██████████| 50/50 [00:10<00:00, 4.9it/s]{'train_loss': 0.25, 'epoch': 3.0}"},
			want: []string{"loss@1=0.6931", "grad_norm@1=1.2", "learning_rate@1=4.5e-05", "epoch@1=0.5",
				"eval_loss@1=0.41", "eval_accuracy@1=0.83", "eval_runtime@1=1.5", "epoch@2=1",
				"eval_accuracy@2=0.85", "epoch@3=2", "eval_loss@3=-150", "train_loss@1=0.25", "epoch@4=3"},
			warn: []string{"metrics dict line: eval_loss: nan recorded as missing"}},
		{name: "dicts that are not metrics",
			lines: []string{"{'model': 'bert', 'lr': 0.1}", "{}", "{'a': [1, 2]}", "{'a' 1}", "{lr: 0.1}", "{'a b': 1}"}},
		{name: "builtin formats off", formats: Formats{NoBuiltin: true},
			lines: []string{"5/5 - 1s - loss: 0.4", "{'eval_loss': 0.41}", "runall-metric x=1"},
			want:  []string{"x@1=1"}},
		{name: "katib's name=value with scientific notation", formats: Formats{Patterns: []*Pattern{katib}},
			lines: []string{"epoch 1: loss=1.5e-05 accuracy=0.9", "lr=-3E+2", "loss=nan", "loss=abc"},
			want:  []string{"loss@1=1.5e-05", "accuracy@1=0.9", "lr@1=-300"},
			warn:  []string{"loss: nan recorded as missing", `loss: "abc" is not a finite number`}},
		{name: "one group per metric", formats: Formats{Patterns: []*Pattern{perMetric}},
			lines: []string{"step 1: train 0.5 / val 0.7", "step 2: train 0.4 / val 0.65", "other"},
			want:  []string{"train_loss@1=0.5", "val_loss@1=0.7", "train_loss@2=0.4", "val_loss@2=0.65"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Set
			r := NewReader(&s, tc.formats)
			var got []string
			for _, l := range tc.lines {
				for _, v := range r.Line(l) {
					got = append(got, fmt.Sprintf("%s@%d=%g", v.Name, v.Step, v.Value))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("values\n%q\nwant\n%q", got, tc.want)
			}
			_, series, warnings := s.Result()
			for k, want := range tc.series {
				if !slices.Equal(series[k], want) && !(len(want) == 1 && series[k] == nil) {
					t.Errorf("series %s: %v, want %v", k, series[k], want)
				}
			}
			if len(warnings) != len(tc.warn) {
				t.Fatalf("warnings %q, want %q", warnings, tc.warn)
			}
			for i, w := range tc.warn {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q, want it to say %q", warnings[i], w)
				}
			}
		})
	}
}

// TestReaderKerasLast: the epoch drawn twice is one step whose value is the last drawn.
func TestReaderKerasLast(t *testing.T) {
	var s Set
	r := NewReader(&s, Formats{})
	for _, l := range []string{"Epoch 1/2", "4/4 [====] - ETA: 0s - loss: 0.9", "4/4 [====] - 1s - loss: 0.8 - val_loss: 1.0",
		"Epoch 2/2", "1/4 [=>..] - ETA: 1s - loss: 0.7", "4/4 [====] - ETA: 0s - loss: 0.6", "4/4 [====] - 1s - loss: 0.5 - val_loss: 0.9"} {
		r.Line(l)
	}
	last, series, _ := s.Result()
	if !maps.Equal(last, map[string]float64{"loss": 0.5, "val_loss": 0.9}) ||
		!slices.Equal(series["loss"], []float64{0.8, 0.5}) || !slices.Equal(series["val_loss"], []float64{1.0, 0.9}) {
		t.Errorf("last %v series %v", last, series)
	}
}

func TestCompilePattern(t *testing.T) {
	tests := []struct{ pattern, err string }{
		{`(?P<name>\w+)=(?P<value>\S+)`, ""},
		{`loss (?P<loss>\S+)`, ""},
		{`loss (\S+)`, "no named group"},
		{`(?P<name>\w+)=(\S+)`, "want both groups"},
		{`(?P<name>\w+)=(?P<value>\S+) (?P<acc>\S+)`, "want both groups"},
		{`(?P<loss>`, "not a regular expression"},
	}
	for _, tc := range tests {
		_, err := CompilePattern(tc.pattern)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.pattern, err, tc.err)
		}
	}
}

// BenchmarkReaderPlainLine: the cost a line of ordinary output pays for recognition.
func BenchmarkReaderPlainLine(b *testing.B) {
	r := NewReader(&Set{}, Formats{})
	for b.Loop() {
		r.Line("line 6665 of the stress test")
	}
}

// BenchmarkReaderKerasLine: an epoch line, read and recorded.
func BenchmarkReaderKerasLine(b *testing.B) {
	r := NewReader(&Set{}, Formats{})
	for b.Loop() {
		r.Line("293/293 - 39s - loss: 0.6259 - accuracy: 0.6564 - val_loss: 0.6948 - val_accuracy: 0.5043")
		r.Line("Epoch 2/5")
	}
}

// TestReaderRestart: a new attempt's first epoch is step 1 again.
func TestReaderRestart(t *testing.T) {
	var s Set
	r := NewReader(&s, Formats{})
	r.Line("runall-metric acc=0.1")
	r.Line("runall-metric acc=0.2")
	r.Restart()
	if v := r.Line("runall-metric acc=0.3"); len(v) != 1 || v[0].Step != 1 {
		t.Errorf("after a restart: %+v, want step 1", v)
	}
	if _, series, _ := s.Result(); !slices.Equal(series["acc"], []float64{0.1, 0.2, 0.3}) {
		t.Errorf("series %v: the values recorded stay", series["acc"])
	}
}
