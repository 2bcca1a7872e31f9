package taskfile

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"gopkg.in/yaml.v3"
)

// The keys of the early-stop rules that pause trials at their checkpoints and resume them
// (sha, hyperband, pbt: runner/earlystop/rounds.go), and the keys each method takes.

var (
	roundsMethods = []string{earlystop.SHA, earlystop.Hyperband, earlystop.PBT}
	pbtKeys       = []string{"interval", "quantile", "perturb", "resample", "explore"}
	// methodKeys are the keys each method takes besides method, metric and mode.
	methodKeys = map[string][]string{
		earlystop.ASHA:      {"grace", "reduction", "max"},
		earlystop.Median:    {"grace", "min-trials"},
		earlystop.SHA:       {"grace", "reduction", "max"},
		earlystop.Hyperband: {"grace", "reduction", "max"},
		earlystop.PBT:       {"interval", "quantile", "perturb", "resample", "explore", "max"},
		earlystop.Forecast:  {"grace", "max", "min-chance", "pause-below", "families"},
	}
)

// knownMethod reports whether m is an early-stop method.
func knownMethod(m string) bool { _, ok := methodKeys[m]; return ok }

// decodeRoundsKey reads one of pbt's keys into c; false when q is none of them.
func decodeRoundsKey(d *Decoder, q Pair, c *earlystop.Config) bool {
	p := &c.Population
	at := Pair{"early-stop: " + q.Name, q.Key, q.Value}
	switch q.Name {
	case "interval":
		p.Interval, _ = d.Integer(at, 1)
	case "quantile":
		p.Quantile = decodeFraction(d, at, 0, 0.5, "the share of the population at each end: 0.25 replaces the worst quarter with copies of the best quarter")
	case "resample":
		p.Resample = decodeFraction(d, at, 0, 1, "the chance that a value is drawn from the space again instead of perturbed")
	case "perturb":
		p.Perturb = decodeFactors(d, at)
	case "explore":
		p.Explore = d.StringOrList(at)
	default:
		return false
	}
	return true
}

// decodeFraction reads a number in (lowest, highest] (quantile) or [lowest, highest]
// (resample, lowest 0 included when highest is 1).
func decodeFraction(d *Decoder, p Pair, lowest, highest float64, means string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(p.Value.Value), 64)
	ok := p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) && err == nil && !math.IsNaN(v) && v <= highest &&
		(v > lowest || highest == 1 && v == lowest)
	if !ok {
		d.Errorf(p.Value, "%s: want a number from %g to %g, %s; got %s", p.Name, lowest, highest, means, describeNode(p.Value))
		return 0
	}
	return v
}

// decodeFactors reads perturb: a list of positive numbers other than 1.
func decodeFactors(d *Decoder, p Pair) []float64 {
	const want = "want a list of factors a value is multiplied by, such as [0.8, 1.25]"
	if p.Value.Kind != yaml.SequenceNode || len(p.Value.Content) == 0 {
		d.Errorf(p.Value, "%s: %s, got %s", p.Name, want, describeNode(p.Value))
		return nil
	}
	var out []float64
	for _, item := range p.Value.Content {
		v, err := strconv.ParseFloat(strings.TrimSpace(ResolveAlias(item).Value), 64)
		if ResolveAlias(item).Kind != yaml.ScalarNode || err != nil || !(v > 0) || math.IsInf(v, 0) || v == 1 {
			d.Errorf(item, "%s: %s: each a number above 0 other than 1, got %s", p.Name, want, describeNode(item))
			continue
		}
		out = append(out, v)
	}
	return out
}

// checkMethodKeys refuses those of keys that c's method does not take, at each key.
func checkMethodKeys(d *Decoder, c *earlystop.Config, seen map[string]*yaml.Node, keys []string) {
	takes := methodKeys[c.Method]
	for _, k := range keys {
		if seen[k] == nil || slices.Contains(takes, k) {
			continue
		}
		d.Errorf(seen[k], "early-stop: %s: is not a key of %s, which takes %s", k, c.Method, strings.Join(takes, ", "))
	}
}

// checkRounds fills in the defaults of sha, hyperband and pbt and refuses what cannot work.
func checkRounds(d *Decoder, p Pair, c *earlystop.Config, seen map[string]*yaml.Node) {
	checkMethodKeys(d, c, seen, slices.Concat(methodKeys[earlystop.ASHA], methodKeys[earlystop.Median], pbtKeys, forecastKeys))
	switch c.Method {
	case earlystop.SHA, earlystop.Hyperband:
		if c.Reduction == 0 {
			c.Reduction = earlystop.DefaultReduction
		}
		if c.Max > 0 && c.Max <= c.Grace {
			d.Errorf(seen["max"], "early-stop: max: %d is not above grace %d: no rung would be left", c.Max, c.Grace)
		}
		if c.Method == earlystop.Hyperband && seen["max"] == nil {
			d.Errorf(p.Value, "early-stop: hyperband needs max: the trials' length in steps, from which its brackets are made (max: 27 with reduction 3 makes brackets starting at steps 1, 3, 9 and 27)")
		}
	case earlystop.PBT:
		if seen["interval"] == nil {
			d.Errorf(p.Value, "early-stop: pbt needs interval: the steps between two exploits (interval: 5: every 5 epochs the worst trials continue from the best ones' checkpoints)")
		}
		if c.Max > 0 && c.Population.Interval >= c.Max {
			d.Errorf(seen["interval"], "early-stop: interval: %d is not below max %d: no exploit would happen", c.Population.Interval, c.Max)
		}
		if c.Population.Quantile == 0 && seen["quantile"] == nil {
			c.Population.Quantile = earlystop.DefaultQuantile
		}
		if seen["resample"] == nil {
			c.Population.Resample = earlystop.DefaultResample
		}
		if seen["perturb"] == nil {
			c.Population.Perturb = earlystop.DefaultPerturb()
		}
	}
}

// methodList is the methods as an error lists them.
func methodList() string {
	return fmt.Sprintf("asha (asynchronous successive halving), median (median stopping), forecast (learning-curve forecasts), %s (synchronous successive halving), %s or %s (population-based training)",
		roundsMethods[0], roundsMethods[1], roundsMethods[2])
}
