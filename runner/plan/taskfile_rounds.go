package plan

import (
	"fmt"
	"maps"
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
	}
)

// knownMethod reports whether m is an early-stop method.
func knownMethod(m string) bool { _, ok := methodKeys[m]; return ok }

// decodeRoundsKey reads one of pbt's keys into c; false when q is none of them.
func decodeRoundsKey(d *nodeDecoder, q nodePair, c *earlystop.Config) bool {
	p := &c.Population
	at := nodePair{"early-stop: " + q.name, q.key, q.value}
	switch q.name {
	case "interval":
		p.Interval, _ = d.integer(at, 1)
	case "quantile":
		p.Quantile = decodeFraction(d, at, 0, 0.5, "the share of the population at each end: 0.25 replaces the worst quarter with copies of the best quarter")
	case "resample":
		p.Resample = decodeFraction(d, at, 0, 1, "the chance that a value is drawn from the space again instead of perturbed")
	case "perturb":
		p.Perturb = decodeFactors(d, at)
	case "explore":
		p.Explore = d.stringOrList(at)
	default:
		return false
	}
	return true
}

// decodeFraction reads a number in (lowest, highest] (quantile) or [lowest, highest]
// (resample, lowest 0 included when highest is 1).
func decodeFraction(d *nodeDecoder, p nodePair, lowest, highest float64, means string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(p.value.Value), 64)
	ok := p.value.Kind == yaml.ScalarNode && !isNull(p.value) && err == nil && !math.IsNaN(v) && v <= highest &&
		(v > lowest || highest == 1 && v == lowest)
	if !ok {
		d.errorf(p.value, "%s: want a number from %g to %g, %s; got %s", p.name, lowest, highest, means, describeNode(p.value))
		return 0
	}
	return v
}

// decodeFactors reads perturb: a list of positive numbers other than 1.
func decodeFactors(d *nodeDecoder, p nodePair) []float64 {
	const want = "want a list of factors a value is multiplied by, such as [0.8, 1.25]"
	if p.value.Kind != yaml.SequenceNode || len(p.value.Content) == 0 {
		d.errorf(p.value, "%s: %s, got %s", p.name, want, describeNode(p.value))
		return nil
	}
	var out []float64
	for _, item := range p.value.Content {
		v, err := strconv.ParseFloat(strings.TrimSpace(resolveAlias(item).Value), 64)
		if resolveAlias(item).Kind != yaml.ScalarNode || err != nil || !(v > 0) || math.IsInf(v, 0) || v == 1 {
			d.errorf(item, "%s: %s: each a number above 0 other than 1, got %s", p.name, want, describeNode(item))
			continue
		}
		out = append(out, v)
	}
	return out
}

// checkMethodKeys refuses those of keys that c's method does not take, at each key.
func checkMethodKeys(d *nodeDecoder, c *earlystop.Config, seen map[string]*yaml.Node, keys []string) {
	takes := methodKeys[c.Method]
	for _, k := range keys {
		if seen[k] == nil || slices.Contains(takes, k) {
			continue
		}
		d.errorf(seen[k], "early-stop: %s: is not a key of %s, which takes %s", k, c.Method, strings.Join(takes, ", "))
	}
}

// checkRounds fills in the defaults of sha, hyperband and pbt and refuses what cannot work.
func checkRounds(d *nodeDecoder, p nodePair, c *earlystop.Config, seen map[string]*yaml.Node) {
	checkMethodKeys(d, c, seen, slices.Concat(methodKeys[earlystop.ASHA], methodKeys[earlystop.Median], pbtKeys))
	switch c.Method {
	case earlystop.SHA, earlystop.Hyperband:
		if c.Reduction == 0 {
			c.Reduction = earlystop.DefaultReduction
		}
		if c.Max > 0 && c.Max <= c.Grace {
			d.errorf(seen["max"], "early-stop: max: %d is not above grace %d: no rung would be left", c.Max, c.Grace)
		}
		if c.Method == earlystop.Hyperband && seen["max"] == nil {
			d.errorf(p.value, "early-stop: hyperband needs max: the trials' length in steps, from which its brackets are made (max: 27 with reduction 3 makes brackets starting at steps 1, 3, 9 and 27)")
		}
	case earlystop.PBT:
		if seen["interval"] == nil {
			d.errorf(p.value, "early-stop: pbt needs interval: the steps between two exploits (interval: 5: every 5 epochs the worst trials continue from the best ones' checkpoints)")
		}
		if c.Max > 0 && c.Population.Interval >= c.Max {
			d.errorf(seen["interval"], "early-stop: interval: %d is not below max %d: no exploit would happen", c.Population.Interval, c.Max)
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

// checkExplore reports, at the block's early-stop, a rule that pauses over a search: trial
// (rounds need every trial before the run), and under pbt, trials with nothing to explore
// (no matrix or sample key) and explore: names that are none of its keys.
func (src *sources) checkExplore(b *Task, at *yaml.Node) {
	if b.EarlyStop == nil || !b.EarlyStop.Pauses() {
		return
	}
	for _, t := range b.Parallel {
		if t.Search != nil {
			src.problemNear(at, b, fmt.Sprintf("early-stop: %s runs a block's trials in rounds, which needs them all before the run, and trial %q (at %s) has search:, whose trials are made as its sampler is asked: use sample: or matrix:, or asha or median", b.EarlyStop.Method, t.Name, t.Pos))
			return
		}
	}
	if b.EarlyStop.Method != earlystop.PBT {
		return
	}
	keys := map[string]bool{}
	for _, t := range b.Parallel {
		if t.Space == nil {
			src.problemNear(at, b, fmt.Sprintf("early-stop: pbt explores the values of its trials' matrix or sample keys, and trial %q has none (at %s): give it a matrix or sample: of the values to explore", t.Name, t.Pos))
			return
		}
		for _, a := range t.Space.Axes {
			keys[a.Name()] = true
		}
	}
	for _, name := range b.EarlyStop.Population.Explore {
		if !keys[name] {
			src.problemNear(at, b, fmt.Sprintf("early-stop: explore: %q is not a matrix or sample key of the block's trials (they have %s)", name, strings.Join(slices.Sorted(maps.Keys(keys)), ", ")))
		}
	}
}

// problemNear is a problem at a block's early-stop key, or at the block when config sets it.
func (src *sources) problemNear(at *yaml.Node, b *Task, msg string) {
	pos := b.Pos
	if at != nil {
		pos = src.pos(at)
	}
	src.problems = append(src.problems, Problem{pos, msg})
}

// methodList is the methods as an error lists them.
func methodList() string {
	return fmt.Sprintf("asha (asynchronous successive halving), median (median stopping), %s (synchronous successive halving), %s or %s (population-based training)",
		roundsMethods[0], roundsMethods[1], roundsMethods[2])
}
