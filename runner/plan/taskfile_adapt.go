package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/internal/lazyre"
	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
	"gopkg.in/yaml.v3"
)

// The keys of sweeps that adapt: where metrics are read from the output (recognize-metrics,
// metric-pattern), search spaces (sample, trials, seed), early stopping (early-stop) and
// samplers of the user's own (search).

// Search is search: on a parallel child: its trials' params come from a sampler the user
// runs (Optuna's CLI, say), asked for one trial at a time and told each one's result.
type Search struct {
	Ask     string        // prints {"number": N, "params": {...}}
	Tell    string        // run after each trial with RUNALL_TRIAL_NUMBER, RUNALL_OBJECTIVE_VALUE, RUNALL_TRIAL_STATE
	Trials  int           // trials: how many to ask for
	Timeout time.Duration // the most one ask or tell may take (DefaultSearchTimeout when 0)
}

// DefaultSearchTimeout is how long an ask or a tell may take unless search: sets timeout:
// a sampler that loads a large study takes seconds, one that hangs must not hold the sweep.
const DefaultSearchTimeout = 5 * time.Minute

// Distribution is one key of sample:: how its values are drawn from a point of the unit
// interval.
type Distribution struct {
	Kind      string   // uniform, loguniform, int, or choice (a list)
	Low, High float64  // uniform, loguniform, int
	Choices   []string // choice
}

// At is the value at u in [0, 1), as it is put into the command.
func (d Distribution) At(u float64) string {
	switch d.Kind {
	case "uniform":
		// Weighted, not Low + u·(High-Low): the difference of ±1.7e308 is infinite.
		return formatSample(d.Low*(1-u) + d.High*u)
	case "loguniform":
		return formatSample(math.Exp(math.Log(d.Low) + u*(math.Log(d.High)-math.Log(d.Low))))
	case "int":
		v := min(math.Floor(d.Low+u*(d.High-d.Low+1)), d.High)
		return strconv.FormatInt(int64(v), 10)
	}
	i := min(int(u*float64(len(d.Choices))), len(d.Choices)-1)
	return d.Choices[i]
}

// formatSample writes a drawn number with 6 significant digits: enough to tell trials
// apart, short enough for a name.
func formatSample(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// sampleAxis is one key of sample:.
type sampleAxis struct {
	name string
	dist Distribution
}

var (
	distRE       = lazyre.New(`^\s*(uniform|loguniform|int)\s*\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)\s*$`)
	searchKeys   = []string{"ask", "tell", "timeout"}
	earlyKeys    = []string{"method", "metric", "mode", "grace", "reduction", "max", "min-trials", "interval", "quantile", "perturb", "resample"}
	ashaOnly     = []string{"reduction", "max"}
	maxSampleDim = 1000 // the Halton sequence's dimensions
)

func decodeSample(d *nodeDecoder, p nodePair) []sampleAxis {
	keys, ok := d.pairs(p.value, "sample: want a mapping of name: distribution, such as lr: loguniform(1e-4, 1e-1)")
	if !ok {
		return nil
	}
	if len(keys) == 0 {
		d.errorf(p.value, "sample: want at least one name: distribution")
	}
	if len(keys) > maxSampleDim {
		d.errorf(p.value, "sample: at most %d keys", maxSampleDim)
		return nil
	}
	var axes []sampleAxis
	for _, k := range keys {
		if k.name == "" || strings.ContainsAny(k.name, "<> \t") {
			d.errorf(k.key, "sample: %q cannot be a placeholder name: want letters, digits, - or _", k.name)
			continue
		}
		if dist, ok := decodeDistribution(d, k); ok {
			axes = append(axes, sampleAxis{k.name, dist})
		}
	}
	return axes
}

func decodeDistribution(d *nodeDecoder, k nodePair) (Distribution, bool) {
	if k.value.Kind == yaml.SequenceNode {
		choices := d.scalarList(nodePair{"sample: " + k.name, k.key, k.value})
		return Distribution{Kind: "choice", Choices: choices}, len(choices) > 0
	}
	bad := func(why string) (Distribution, bool) {
		d.errorf(k.value, "sample: %s: %s: want uniform(LOW, HIGH), loguniform(LOW, HIGH), int(LOW, HIGH) or a list of values", k.name, why)
		return Distribution{}, false
	}
	if k.value.Kind != yaml.ScalarNode || isNull(k.value) {
		return bad("got " + describeNode(k.value))
	}
	m := distRE.FindStringSubmatch(k.value.Value)
	if m == nil && strings.Contains(k.value.Value, "(") && !strings.Contains(k.value.Value, ")") {
		return bad(fmt.Sprintf("cannot read %q (in a {...} mapping a comma ends the value: quote it, %s: 'uniform(0, 1)')", k.value.Value, k.name))
	}
	if m == nil {
		return bad(fmt.Sprintf("cannot read %q", k.value.Value))
	}
	lo, err1 := strconv.ParseFloat(m[2], 64)
	hi, err2 := strconv.ParseFloat(m[3], 64)
	switch {
	case err1 != nil || err2 != nil || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return bad(fmt.Sprintf("%q: LOW and HIGH must be numbers", k.value.Value))
	case m[1] == "int" && (lo != math.Trunc(lo) || hi != math.Trunc(hi) || lo > hi):
		return bad(fmt.Sprintf("%q: LOW and HIGH must be whole numbers, LOW at most HIGH", k.value.Value))
	case m[1] == "int" && (math.Abs(lo) > 1<<52 || math.Abs(hi) > 1<<52):
		return bad(fmt.Sprintf("%q: LOW and HIGH must be within ±%d (2^52), where every whole number is drawn exactly", k.value.Value, int64(1)<<52))
	case m[1] != "int" && lo >= hi:
		return bad(fmt.Sprintf("%q: LOW must be less than HIGH", k.value.Value))
	case m[1] == "loguniform" && lo <= 0:
		return bad(fmt.Sprintf("%q: loguniform needs LOW greater than 0", k.value.Value))
	}
	return Distribution{Kind: m[1], Low: lo, High: hi}, true
}

func decodeSearch(d *nodeDecoder, p nodePair) *Search {
	ps, ok := d.pairs(p.value, "search: want a mapping with ask: and tell: commands")
	if !ok {
		return nil
	}
	s := &Search{}
	for _, q := range ps {
		switch q.name {
		case "ask":
			s.Ask = strings.TrimSpace(d.str(q))
		case "tell":
			s.Tell = strings.TrimSpace(d.str(q))
		case "timeout":
			s.Timeout = d.duration(nodePair{"search: timeout", q.key, q.value}, "")
		default:
			d.unknownKey(q, "search:", searchKeys)
		}
	}
	if s.Ask == "" {
		d.errorf(p.value, `search: ask: missing: want the command that prints a trial as JSON ({"number": 3, "params": {"lr": 0.01}})`)
	}
	if s.Tell == "" {
		d.errorf(p.value, "search: tell: missing: want the command run after each trial (with $RUNALL_TRIAL_NUMBER, $RUNALL_OBJECTIVE_VALUE, $RUNALL_TRIAL_STATE)")
	}
	return s
}

// decodeEarlyStop reads early-stop:. metric and mode may be left to the objective's; the
// loader fills them in.
func decodeEarlyStop(d *nodeDecoder, p nodePair) *earlystop.Config {
	ps, ok := d.pairs(p.value, "early-stop: want a mapping such as {method: asha, grace: 1, reduction: 3}")
	if !ok {
		return nil
	}
	c := &earlystop.Config{Grace: earlystop.DefaultGrace}
	seen := map[string]*yaml.Node{}
	for _, q := range ps {
		seen[q.name] = q.key
		switch q.name {
		case "method":
			c.Method = d.str(q)
			if !knownMethod(c.Method) {
				d.errorf(q.value, "early-stop: method: want %s, got %s", methodList(), describeNode(q.value))
			}
		case "metric":
			c.Metric = d.str(q)
			if !metric.ValidName(c.Metric) {
				d.errorf(q.value, "early-stop: metric: %q is not a metric name: want letters, digits, _ . : / -, starting with a letter or _", c.Metric)
			}
		case "mode":
			c.Mode = d.str(q)
			if c.Mode != "max" && c.Mode != "min" {
				d.errorf(q.value, "early-stop: mode: want max or min, got %s", describeNode(q.value))
			}
		case "grace":
			c.Grace, _ = d.integer(nodePair{"early-stop: grace", q.key, q.value}, 1)
		case "reduction":
			c.Reduction, _ = d.integer(nodePair{"early-stop: reduction", q.key, q.value}, 2)
		case "max":
			c.Max, _ = d.integer(nodePair{"early-stop: max", q.key, q.value}, 1)
		case "min-trials":
			c.MinTrials, _ = d.integer(nodePair{"early-stop: min-trials", q.key, q.value}, 1)
		default:
			if !decodeRoundsKey(d, q, c) {
				d.unknownKey(q, "early-stop:", earlyKeys)
			}
		}
	}
	checkEarlyStop(d, p, c, seen)
	return c
}

// checkEarlyStop fills in the method's defaults and refuses the other method's keys.
func checkEarlyStop(d *nodeDecoder, p nodePair, c *earlystop.Config, seen map[string]*yaml.Node) {
	switch c.Method {
	case "":
		d.errorf(p.value, "early-stop: method: missing: want %s", methodList())
	case earlystop.SHA, earlystop.Hyperband, earlystop.PBT:
		checkRounds(d, p, c, seen)
	case earlystop.ASHA:
		checkMethodKeys(d, c, seen, pbtKeys)
		if c.Reduction == 0 {
			c.Reduction = earlystop.DefaultReduction
		}
		if k := seen["min-trials"]; k != nil {
			d.errorf(k, "early-stop: min-trials: is median's; asha compares with whatever its rung holds")
		}
		if c.Max > 0 && c.Max <= c.Grace {
			d.errorf(seen["max"], "early-stop: max: %d is not above grace %d: no rung would be left", c.Max, c.Grace)
		}
	case earlystop.Median:
		checkMethodKeys(d, c, seen, pbtKeys)
		if c.MinTrials == 0 {
			c.MinTrials = earlystop.DefaultMinTrials
		}
		for _, k := range ashaOnly {
			if seen[k] != nil {
				d.errorf(seen[k], "early-stop: %s: is asha's; median stopping has grace and min-trials", k)
			}
		}
	}
}

// decodePatterns reads metric-pattern: one regexp or a list of them.
func decodePatterns(d *nodeDecoder, p nodePair) []*metric.Pattern {
	var out []*metric.Pattern
	for _, s := range d.stringOrList(p) {
		pat, err := metric.CompilePattern(s)
		if err != nil {
			d.errorf(p.value, "metric-pattern: %q: %v", s, err)
			continue
		}
		out = append(out, pat)
	}
	return out
}

// fillEarlyStop takes metric and mode from the objective where early-stop leaves them out.
// The objective's mode is the metric's own: early stopping on another metric takes none of
// it (val_loss under an objective of val_accuracy, max, would keep the worst trials).
func (l *loader) fillEarlyStop(c *earlystop.Config, at *yaml.Node) *earlystop.Config {
	if c == nil {
		return nil
	}
	out := *c
	problem := func(msg string, args ...any) {
		l.src.problems = append(l.src.problems, Problem{l.src.pos(at), fmt.Sprintf(msg, args...)})
	}
	objs := l.cfg.Objectives
	if len(objs) > 1 && out.Metric == "" {
		problem("early-stop: metric: missing: config objective lists several metrics (%s), so early stopping takes none of them: name the one it compares in early-stop: metric:", objectiveNames(objs))
		return &out
	}
	if len(objs) == 1 && out.Metric == "" {
		out.Metric = objs[0].Metric
	}
	o := objectiveNamed(objs, out.Metric)
	switch {
	case len(objs) == 0 || out.Metric == "":
	case o == nil && out.Mode == "" && len(objs) == 1:
		problem("early-stop: mode: missing: %s is not the objective's metric (%s), so it does not take the objective's mode %s: set mode: max or min for %s", out.Metric, objs[0].Metric, objs[0].Mode, out.Metric)
		return &out
	case o == nil && out.Mode == "":
		problem("early-stop: mode: missing: %s is none of the objectives' metrics (%s), so it takes no objective's mode: set mode: max or min for %s", out.Metric, objectiveNames(objs), out.Metric)
		return &out
	case out.Mode == "":
		out.Mode = o.Mode
	case o != nil && out.Mode != o.Mode:
		problem("early-stop: mode: %s contradicts the objective's mode %s for the same metric %s: early stopping would keep the trials the summary ranks worst; leave mode out, or make them agree", out.Mode, o.Mode, out.Metric)
	}
	if out.Metric == "" || out.Mode == "" {
		problem("early-stop: metric and mode: missing: set them here, or set config objective: {metric, mode}, which early stopping then uses")
	}
	return &out
}

// objectiveNamed is the objective of metric m, nil when none is.
func objectiveNamed(objs []Objective, m string) *Objective {
	for i := range objs {
		if objs[i].Metric == m {
			return &objs[i]
		}
	}
	return nil
}

// objectiveNames lists the objectives' metrics for messages: "val_accuracy, latency_ms".
func objectiveNames(objs []Objective) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.Metric
	}
	return strings.Join(names, ", ")
}

// checkAdaptKeys reports sample, search, trials and early-stop where they have no meaning.
func checkAdaptKeys(d *nodeDecoder, t *rawTask, level int) {
	for _, k := range []string{"sample", "search"} {
		if t.has(k) && level != levelTrial {
			d.errorf(t.keys[k], "%s: makes the trials of a block: set it on a child of parallel-tasks", k)
		}
	}
	switch {
	case t.has("sample") && t.has("search"):
		d.errorf(t.keys["search"], "search: cannot be combined with sample: the sampler of search draws the params itself")
	case t.has("search") && (t.has("matrix") || t.has("for-each")):
		d.errorf(t.keys["search"], "search: cannot be combined with matrix or for-each: the sampler draws every param")
	case t.has("sample") && t.has("for-each"):
		d.errorf(t.keys["sample"], "sample: cannot be combined with for-each: make the for-each values a matrix key")
	case (t.has("sample") || t.has("search")) && !t.has("trials"):
		k := "sample"
		if t.has("search") {
			k = "search"
		}
		d.errorf(t.keys[k], "%s: needs trials: N, how many trials to run", k)
	case t.has("trials") && !t.has("sample") && !t.has("search"):
		d.errorf(t.keys["trials"], "trials: counts the trials of sample: or search: on this task, which has neither")
	}
	if t.has("seed") && !t.has("sample") {
		d.errorf(t.keys["seed"], "seed: scrambles the points of sample:, which this task does not have")
	}
	if n := countSearch(t.parallel); n > 0 && len(t.parallel) > 1 {
		d.errorf(t.keys["parallel-tasks"], "parallel-tasks: a child with search: must be its block's only child: put the other trials in a block of their own")
	}
	if t.has("early-stop") && !t.has("parallel-tasks") {
		d.errorf(t.keys["early-stop"], "early-stop: stops the losing trials of a block: set it on the task with parallel-tasks, or in config:")
	}
}

func countSearch(ts []*rawTask) int {
	n := 0
	for _, t := range ts {
		if t.search != nil {
			n++
		}
	}
	return n
}
