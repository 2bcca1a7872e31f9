package taskfile

import (
	"fmt"
	"math"
	"slices"
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
		return FormatSample(d.Low*(1-u) + d.High*u)
	case "loguniform":
		return FormatSample(math.Exp(math.Log(d.Low) + u*(math.Log(d.High)-math.Log(d.Low))))
	case "int":
		v := min(math.Floor(d.Low+u*(d.High-d.Low+1)), d.High)
		return strconv.FormatInt(int64(v), 10)
	}
	i := min(int(u*float64(len(d.Choices))), len(d.Choices)-1)
	return d.Choices[i]
}

// FormatSample writes a drawn number with 6 significant digits: enough to tell trials
// apart, short enough for a name.
func FormatSample(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// SampleAxis is one key of sample:.
type SampleAxis struct {
	Name string
	Dist Distribution
}

var (
	distRE       = lazyre.New(`^\s*(uniform|loguniform|int)\s*\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)\s*$`)
	searchKeys   = []string{"ask", "tell", "timeout"}
	earlyKeys    = []string{"method", "metric", "mode", "grace", "reduction", "max", "min-trials", "interval", "quantile", "perturb", "resample", "min-chance", "pause-below", "families"}
	ashaOnly     = []string{"reduction", "max"}
	maxSampleDim = 1000 // the Halton sequence's dimensions
)

func decodeSample(d *Decoder, p Pair) []SampleAxis {
	keys, ok := d.Pairs(p.Value, "sample: want a mapping of name: distribution, such as lr: loguniform(1e-4, 1e-1)")
	if !ok {
		return nil
	}
	if len(keys) == 0 {
		d.Errorf(p.Value, "sample: want at least one name: distribution")
	}
	if len(keys) > maxSampleDim {
		d.Errorf(p.Value, "sample: at most %d keys", maxSampleDim)
		return nil
	}
	var axes []SampleAxis
	for _, k := range keys {
		if k.Name == "" || strings.ContainsAny(k.Name, "<> \t") {
			d.Errorf(k.Key, "sample: %q cannot be a placeholder name: want letters, digits, - or _", k.Name)
			continue
		}
		if dist, ok := decodeDistribution(d, k); ok {
			axes = append(axes, SampleAxis{k.Name, dist})
		}
	}
	return axes
}

func decodeDistribution(d *Decoder, k Pair) (Distribution, bool) {
	if k.Value.Kind == yaml.SequenceNode {
		choices := d.ScalarList(Pair{"sample: " + k.Name, k.Key, k.Value})
		return Distribution{Kind: "choice", Choices: choices}, len(choices) > 0
	}
	bad := func(why string) (Distribution, bool) {
		d.Errorf(k.Value, "sample: %s: %s: want uniform(LOW, HIGH), loguniform(LOW, HIGH), int(LOW, HIGH) or a list of values", k.Name, why)
		return Distribution{}, false
	}
	if k.Value.Kind != yaml.ScalarNode || isNull(k.Value) {
		return bad("got " + describeNode(k.Value))
	}
	m := distRE.FindStringSubmatch(k.Value.Value)
	if m == nil && strings.Contains(k.Value.Value, "(") && !strings.Contains(k.Value.Value, ")") {
		return bad(fmt.Sprintf("cannot read %q (in a {...} mapping a comma ends the value: quote it, %s: 'uniform(0, 1)')", k.Value.Value, k.Name))
	}
	if m == nil {
		return bad(fmt.Sprintf("cannot read %q", k.Value.Value))
	}
	lo, err1 := strconv.ParseFloat(m[2], 64)
	hi, err2 := strconv.ParseFloat(m[3], 64)
	switch {
	case err1 != nil || err2 != nil || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return bad(fmt.Sprintf("%q: LOW and HIGH must be numbers", k.Value.Value))
	case m[1] == "int" && (lo != math.Trunc(lo) || hi != math.Trunc(hi) || lo > hi):
		return bad(fmt.Sprintf("%q: LOW and HIGH must be whole numbers, LOW at most HIGH", k.Value.Value))
	case m[1] == "int" && (math.Abs(lo) > 1<<52 || math.Abs(hi) > 1<<52):
		return bad(fmt.Sprintf("%q: LOW and HIGH must be within ±%d (2^52), where every whole number is drawn exactly", k.Value.Value, int64(1)<<52))
	case m[1] != "int" && lo >= hi:
		return bad(fmt.Sprintf("%q: LOW must be less than HIGH", k.Value.Value))
	case m[1] == "loguniform" && lo <= 0:
		return bad(fmt.Sprintf("%q: loguniform needs LOW greater than 0", k.Value.Value))
	}
	return Distribution{Kind: m[1], Low: lo, High: hi}, true
}

func decodeSearch(d *Decoder, p Pair) *Search {
	ps, ok := d.Pairs(p.Value, "search: want a mapping with ask: and tell: commands")
	if !ok {
		return nil
	}
	s := &Search{}
	for _, q := range ps {
		switch q.Name {
		case "ask":
			s.Ask = strings.TrimSpace(d.Str(q))
		case "tell":
			s.Tell = strings.TrimSpace(d.Str(q))
		case "timeout":
			s.Timeout = d.Duration(Pair{"search: timeout", q.Key, q.Value}, "")
		default:
			d.UnknownKey(q, "search:", searchKeys)
		}
	}
	if s.Ask == "" {
		d.Errorf(p.Value, `search: ask: missing: want the command that prints a trial as JSON ({"number": 3, "params": {"lr": 0.01}})`)
	}
	if s.Tell == "" {
		d.Errorf(p.Value, "search: tell: missing: want the command run after each trial (with $RUNALL_TRIAL_NUMBER, $RUNALL_OBJECTIVE_VALUE, $RUNALL_TRIAL_STATE)")
	}
	return s
}

// decodeEarlyStop reads early-stop:. metric and mode may be left to the objective's; the
// plan's loader fills them in.
func decodeEarlyStop(d *Decoder, p Pair) *earlystop.Config {
	ps, ok := d.Pairs(p.Value, "early-stop: want a mapping such as {method: asha, grace: 1, reduction: 3}")
	if !ok {
		return nil
	}
	c := &earlystop.Config{Grace: earlystop.DefaultGrace}
	seen := map[string]*yaml.Node{}
	for _, q := range ps {
		seen[q.Name] = q.Key
		switch q.Name {
		case "method":
			c.Method = d.Str(q)
			if !knownMethod(c.Method) {
				d.Errorf(q.Value, "early-stop: method: want %s, got %s", methodList(), describeNode(q.Value))
			}
		case "metric":
			c.Metric = d.Str(q)
			if !metric.ValidName(c.Metric) {
				d.Errorf(q.Value, "early-stop: metric: %q is not a metric name: want letters, digits, _ . : / -, starting with a letter or _", c.Metric)
			}
		case "mode":
			c.Mode = d.Str(q)
			if c.Mode != "max" && c.Mode != "min" {
				d.Errorf(q.Value, "early-stop: mode: want max or min, got %s", describeNode(q.Value))
			}
		case "grace":
			c.Grace, _ = d.Integer(Pair{"early-stop: grace", q.Key, q.Value}, 1)
		case "reduction":
			c.Reduction, _ = d.Integer(Pair{"early-stop: reduction", q.Key, q.Value}, 2)
		case "max":
			c.Max, _ = d.Integer(Pair{"early-stop: max", q.Key, q.Value}, 1)
		case "min-trials":
			c.MinTrials, _ = d.Integer(Pair{"early-stop: min-trials", q.Key, q.Value}, 1)
		default:
			if !decodeRoundsKey(d, q, c) && !decodeForecastKey(d, q, c) {
				d.UnknownKey(q, "early-stop:", earlyKeys)
			}
		}
	}
	checkEarlyStop(d, p, c, seen)
	return c
}

// checkEarlyStop fills in the method's defaults and refuses the other method's keys.
func checkEarlyStop(d *Decoder, p Pair, c *earlystop.Config, seen map[string]*yaml.Node) {
	switch c.Method {
	case "":
		d.Errorf(p.Value, "early-stop: method: missing: want %s", methodList())
	case earlystop.SHA, earlystop.Hyperband, earlystop.PBT:
		checkRounds(d, p, c, seen)
	case earlystop.Forecast:
		checkForecast(d, p, c, seen)
	case earlystop.ASHA:
		checkMethodKeys(d, c, seen, slices.Concat(pbtKeys, forecastKeys))
		if c.Reduction == 0 {
			c.Reduction = earlystop.DefaultReduction
		}
		if k := seen["min-trials"]; k != nil {
			d.Errorf(k, "early-stop: min-trials: is median's; asha compares with whatever its rung holds")
		}
		if c.Max > 0 && c.Max <= c.Grace {
			d.Errorf(seen["max"], "early-stop: max: %d is not above grace %d: no rung would be left", c.Max, c.Grace)
		}
	case earlystop.Median:
		checkMethodKeys(d, c, seen, slices.Concat(pbtKeys, forecastKeys))
		if c.MinTrials == 0 {
			c.MinTrials = earlystop.DefaultMinTrials
		}
		for _, k := range ashaOnly {
			if seen[k] != nil {
				d.Errorf(seen[k], "early-stop: %s: is asha's; median stopping has grace and min-trials", k)
			}
		}
	}
}

// decodePatterns reads metric-pattern: one regexp or a list of them.
func decodePatterns(d *Decoder, p Pair) []*metric.Pattern {
	var out []*metric.Pattern
	for _, s := range d.StringOrList(p) {
		pat, err := metric.CompilePattern(s)
		if err != nil {
			d.Errorf(p.Value, "metric-pattern: %q: %v", s, err)
			continue
		}
		out = append(out, pat)
	}
	return out
}
