package importance

import (
	"encoding/json"
	"os"
	"testing"
)

// optunaFigures are trials and the importances Optuna 5's own PedAnovaImportanceEvaluator
// gives them (testdata/optuna_figures.py wrote them, with Optuna's source at commit 1d8ce7bb):
// raw, as evaluate returns them, and normalised, as get_param_importances does.
type optunaFigures struct {
	Optuna string `json:"optuna"`
	Cases  []struct {
		Name        string   `json:"name"`
		LowerBetter bool     `json:"lower_better"`
		Log         []string `json:"log"`
		Trials      []struct {
			Params map[string]string `json:"params"`
			Value  float64           `json:"value"`
		} `json:"trials"`
		Raw        map[string]float64 `json:"raw"`
		Importance map[string]float64 `json:"importance"`
	} `json:"cases"`
}

func TestOptunaFigures(t *testing.T) {
	b, err := os.ReadFile("testdata/optuna_figures.json")
	if err != nil {
		t.Fatal(err)
	}
	var f optunaFigures
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range f.Cases {
		trials := make([]Trial, len(c.Trials))
		for i, tr := range c.Trials {
			trials[i] = Trial{Params: tr.Params, Value: tr.Value}
		}
		log := map[string]bool{}
		for _, n := range c.Log {
			log[n] = true
		}
		top := topQuantile(trials, TargetQuantile, c.LowerBetter)
		for name, want := range c.Raw {
			if got := paramImportance(name, trials, top, log[name]); !near(got, want, 1e-9+1e-6*want) {
				t.Errorf("%s: %s: raw importance %.12g, Optuna %s gives %.12g", c.Name, name, got, f.Optuna, want)
			}
		}
		got := byName(Evaluate(trials, c.LowerBetter, log))
		if len(got) != len(c.Importance) {
			t.Errorf("%s: %d params, want %d", c.Name, len(got), len(c.Importance))
		}
		for name, want := range c.Importance {
			if !near(got[name].Importance, want, 1e-7) {
				t.Errorf("%s: %s: importance %.9g, Optuna %s gives %.9g", c.Name, name, got[name].Importance, f.Optuna, want)
			}
		}
	}
}
