package search

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
)

func TestParseTrial(t *testing.T) {
	tests := []struct {
		name, out string
		want      Trial
		err       string
	}{
		{"optuna's line", `{"number": 3, "params": {"lr": 0.04296836722412423, "act": "tanh", "n": 1, "bn": true}}`,
			Trial{3, []plan.Param{{Name: "lr", Value: "0.04296836722412423"}, {Name: "act", Value: "tanh"}, {Name: "n", Value: "1"}, {Name: "bn", Value: "true"}}}, ""},
		{"log lines before it", "loading\n{\"number\": 0, \"params\": {}}\n", Trial{0, nil}, ""},
		{"scientific notation kept as printed", `{"number": 1, "params": {"lr": 1e-05}}`, Trial{1, []plan.Param{{Name: "lr", Value: "1e-05"}}}, ""},
		{"nothing", "", Trial{}, "no JSON object: want a line"},
		{"not JSON", "{number: 1}", Trial{}, "not JSON"},
		{"no number", `{"params": {}}`, Trial{}, `no "number"`},
		{"fractional number", `{"number": 1.5, "params": {}}`, Trial{}, "is not a trial number"},
		{"no params", `{"number": 1}`, Trial{}, `no "params"`},
		{"nested param", `{"number": 1, "params": {"a": [1]}}`, Trial{}, `param "a": want a number`},
		{"params not an object", `{"number": 1, "params": 3}`, Trial{}, "not an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTrial([]byte(tc.out))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestAskTell(t *testing.T) {
	dir := t.TempDir()
	s := Sampler{Spec: &plan.Search{
		Ask:  `echo '{"number": 7, "params": {"lr": 0.5}}'`,
		Tell: `echo "$RUNALL_TRIAL_NUMBER $RUNALL_OBJECTIVE_VALUE $RUNALL_TRIAL_STATE [$RUNALL_OBJECTIVE_VALUES]" > told`,
	}, Dir: dir, Env: os.Environ()}
	tr, err := s.Ask(context.Background())
	if err != nil || tr.Number != 7 || tr.Params[0] != (plan.Param{Name: "lr", Value: "0.5"}) {
		t.Fatalf("ask: %+v, %v", tr, err)
	}
	if err := s.Tell(context.Background(), 7, []string{"0.91"}, StateComplete); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "told")); string(b) != "7 0.91 complete [0.91]\n" {
		t.Errorf("told %q", b)
	}
	// Several objectives: the first alone, and every one for tell --values a b.
	if err := s.Tell(context.Background(), 8, []string{"0.91", "12.5"}, StateComplete); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "told")); string(b) != "8 0.91 complete [0.91 12.5]\n" {
		t.Errorf("told %q", b)
	}

	s.Spec.Ask = "echo 'loading study s'; echo 'no such study' >&2; exit 3"
	if _, err := s.Ask(context.Background()); err == nil || !strings.Contains(err.Error(), "exit status 3: it printed:\n  stderr: no such study\n  stdout: loading study s") || !strings.Contains(err.Error(), "ask `echo 'loading study s';") {
		t.Errorf("failed ask: %v", err)
	}
	s.Spec.Ask = "exit 4"
	if _, err := s.Ask(context.Background()); err == nil || !strings.HasSuffix(err.Error(), "exit status 4: it printed nothing") {
		t.Errorf("silent failed ask: %v", err)
	}
	s.Spec.Ask = "echo hello"
	if _, err := s.Ask(context.Background()); err == nil || !strings.Contains(err.Error(), "got: hello") {
		t.Errorf("bad JSON: %v", err)
	}
	s.Spec.Tell = "exit 1"
	if err := s.Tell(context.Background(), 2, nil, StateFail); err == nil || !strings.Contains(err.Error(), "trial 2, fail") {
		t.Errorf("failed tell: %v", err)
	}
}
