// Package importance says how much each hyperparameter of a sweep matters to its objective,
// with PED-ANOVA (Watanabe et al., IJCAI 2023), ported from Optuna's default importance
// evaluator (optuna/importance/_ped_anova, Optuna 4 and 5) with its defaults: a parameter
// matters as much as the distribution of its values among the best TargetQuantile of the
// trials differs (Pearson divergence) from their distribution among all trials, each a Parzen
// estimator on a grid. It knows nothing of the task file or the run.
package importance

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

const (
	// TargetQuantile is the share of the trials, the best, whose parameters are compared
	// with all trials' (Optuna's target_quantile; its region_quantile is 1: all trials).
	TargetQuantile = 0.1
	// MinTrials is the least number of finished trials importance is computed from: with
	// fewer, Optuna returns zero for every parameter.
	MinTrials = 2
	// StableTop is how many trials the top quantile should hold for importances that do not
	// change with every trial (Optuna's advice: at least 5).
	StableTop = 5
	// Steps is how many grid points a numerical parameter's range is cut into.
	Steps = 50
	// PriorWeight is the weight of the uniform prior kernel of each estimator.
	PriorWeight = 1.0
	// minInRegime is how many trials must have, or lack, a parameter for that group to count.
	minInRegime = 2
)

// Trial is one finished trial: its parameters and its objective's value.
type Trial struct {
	Params map[string]string
	Value  float64
}

// Param is one parameter's importance: its share of the sum over all parameters (as
// optuna.importance.get_param_importances gives it), and the Spearman correlation of its
// values with the objective's (numbers only; 0 for a choice), whose sign says whether the
// objective rises (+) or falls (-) as the parameter grows.
type Param struct {
	Name        string  `json:"name"`
	Importance  float64 `json:"importance"`
	Correlation float64 `json:"correlation"`
	Sign        string  `json:"sign,omitempty"` // "+", "-", or none: a choice, or no correlation
}

// Result is the importance of a sweep's parameters for one objective metric.
type Result struct {
	Method    string  `json:"method"`     // "ped-anova"
	Quantile  float64 `json:"quantile"`   // TargetQuantile
	MinTrials int     `json:"min_trials"` // MinTrials
	Trials    int     `json:"trials"`     // the finished trials it was computed from
	Top       int     `json:"top"`        // how many of them are in the top quantile
	// Note says why the importances say little: too few trials, or none that matters.
	Note   string  `json:"note,omitempty"`
	Params []Param `json:"params,omitempty"` // most important first
}

// Evaluate is each parameter's importance for reaching the best TargetQuantile of trials'
// values: the lowest when lowerBetter, else the highest. Trials whose value is not finite
// are left out. log names the parameters sampled on a log scale.
func Evaluate(trials []Trial, lowerBetter bool, log map[string]bool) Result {
	trials = slices.DeleteFunc(slices.Clone(trials), func(t Trial) bool {
		return math.IsNaN(t.Value) || math.IsInf(t.Value, 0)
	})
	res := Result{Method: "ped-anova", Quantile: TargetQuantile, MinTrials: MinTrials, Trials: len(trials)}
	if len(trials) < MinTrials {
		res.Note = fmt.Sprintf("too few trials: %d finished with a value, PED-ANOVA needs at least %d", len(trials), MinTrials)
		return res
	}
	names := paramNames(trials)
	if len(names) == 0 {
		return res
	}
	top := topQuantile(trials, TargetQuantile, lowerBetter)
	res.Top = len(top)
	raw := map[string]float64{}
	for _, n := range names {
		raw[n] = paramImportance(n, trials, top, log[n])
	}
	res.Params, res.Note = normalise(names, raw)
	if res.Note == "" && res.Top < StableTop {
		res.Note = fmt.Sprintf("few trials: %d in the top %g%%, fewer than the %d PED-ANOVA needs to be stable (%d trials)", res.Top, TargetQuantile*100, StableTop, int(math.Ceil(StableTop/TargetQuantile)))
	}
	for i := range res.Params {
		p := &res.Params[i]
		p.Correlation = spearman(p.Name, trials)
		p.Sign = sign(p.Correlation)
	}
	return res
}

// normalise divides each importance by their sum, most important first (names break ties);
// with a sum of 0 each gets an equal share, as in Optuna, and the note says why.
func normalise(names []string, raw map[string]float64) ([]Param, string) {
	sum := 0.0
	for _, v := range raw {
		sum += v
	}
	note := ""
	out := make([]Param, 0, len(names))
	for _, n := range names {
		v := 1 / float64(len(names))
		if sum > 0 {
			v = raw[n] / sum
		}
		out = append(out, Param{Name: n, Importance: v})
	}
	if sum == 0 {
		note = "no parameter's values differ between the top trials and the rest: importances are equal"
	}
	slices.SortStableFunc(out, func(a, b Param) int {
		return cmp.Or(cmp.Compare(b.Importance, a.Importance), cmp.Compare(a.Name, b.Name))
	})
	return out, note
}

// paramNames are the parameters any trial has, sorted.
func paramNames(trials []Trial) []string {
	var out []string
	for _, t := range trials {
		for n := range t.Params {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sign(c float64) string {
	switch {
	case c > 0:
		return "+"
	case c < 0:
		return "-"
	}
	return ""
}
