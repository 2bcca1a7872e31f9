package metric

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/runall/runall/internal/lazyre"
)

// Metrics are recognised in a trial's output as training scripts already print them, with no
// change to the script: runall's own runall-metric lines, the epoch lines of Keras's
// model.fit, the dict lines of Hugging Face's Trainer, and the file's own metric-pattern
// regexps. One value of a metric per epoch (or per report) is one step of its curve.

// Value is one value of a metric read from a line. Step counts the values of its name so far,
// 1 for the first; a value left out as missing (nan, inf) still took its step.
type Value struct {
	Name  string
	Step  int
	Value float64
}

// Formats says what a Reader recognises besides runall-metric lines, which it always reads.
type Formats struct {
	// NoBuiltin turns off the formats recognised by default (Keras epoch lines, Hugging
	// Face dict lines): recognize-metrics: false.
	NoBuiltin bool
	Patterns  []*Pattern // metric-pattern:
}

// Pattern is one metric-pattern: a regexp with named groups name and value (each match is
// one metric), or one named group per metric (the group's name is the metric's).
type Pattern struct {
	re     *regexp.Regexp
	text   string
	pairs  bool     // groups name and value
	groups []string // otherwise: the metric groups, by index (empty for unnamed groups)
}

// String is the pattern as written.
func (p *Pattern) String() string { return p.text }

// CompilePattern reads a metric-pattern: a regexp (Go's syntax, as Python's (?P<name>...)
// groups) with named groups name and value, or one named group per metric.
func CompilePattern(s string) (*Pattern, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, fmt.Errorf("not a regular expression: %w", err)
	}
	p := &Pattern{re: re, text: s, groups: re.SubexpNames()}
	hasName, hasValue, others := false, false, 0
	for _, g := range p.groups {
		switch g {
		case "":
		case "name":
			hasName = true
		case "value":
			hasValue = true
		default:
			if !ValidName(g) {
				return nil, fmt.Errorf("group %q cannot name a metric", g)
			}
			others++
		}
	}
	switch {
	case hasName && hasValue && others == 0:
		p.pairs = true
	case hasName || hasValue:
		return nil, fmt.Errorf("want both groups (?P<name>...) and (?P<value>...), and no others named")
	case others == 0:
		return nil, fmt.Errorf("no named group: want (?P<name>...) and (?P<value>...), or one group per metric such as (?P<loss>...)")
	}
	return p, nil
}

// Reader reads one trial's output lines into its Set, recognising the formats it is given.
// Lines are given one at a time, in order (a trial's output is read serially).
type Reader struct {
	set     *Set
	formats Formats
	steps   map[string]int  // values seen per name, missing ones included
	base    int             // the step a resumed attempt goes on from (Resume)
	open    map[string]bool // the names of the Keras epoch whose last state may still change
}

// NewReader reads lines into s.
func NewReader(s *Set, f Formats) *Reader {
	return &Reader{set: s, formats: f, steps: map[string]int{}}
}

// Restart counts steps from 1 again: a new attempt of the command trains from its start.
// The values already recorded stay.
func (r *Reader) Restart() {
	clear(r.steps)
	r.open, r.base = nil, 0
}

// Line reads one line of the trial's stdout and returns the values it recorded, in the
// order the line gives them.
func (r *Reader) Line(line string) []Value {
	if IsLine(line) {
		return r.record(r.set.lineValues(line), false)
	}
	var out []Value
	if !r.formats.NoBuiltin {
		out = r.builtin(line)
	}
	for _, p := range r.formats.Patterns {
		out = append(out, r.record(r.pattern(p, line), false)...)
	}
	return out
}

// builtin recognises Keras's and Hugging Face's lines. Most lines of most output are
// neither: a line without a colon holds no "name: value" and is passed over at the cost of
// one scan, unless it may start a Keras epoch ("Epoch 2/5").
func (r *Reader) builtin(line string) []Value {
	if strings.IndexByte(line, ':') < 0 {
		if r.open != nil && strings.IndexByte(line, '/') >= 0 && kerasBoundary(lastState(line)) {
			r.open = nil
		}
		return nil
	}
	state := lastState(line)
	if kv, ok := kerasEpoch(state); ok {
		// Keras draws the epoch's last batch twice with a terminal: once as the batch
		// ends, once more with the validation metrics. Both are the same step.
		replace := r.open != nil
		vals := r.record(r.parsed(kv, "Keras epoch line"), replace)
		if r.open == nil {
			r.open = map[string]bool{}
		}
		for _, f := range kv {
			r.open[f.name] = true
		}
		return vals
	}
	if kerasBoundary(state) {
		r.open = nil
	}
	if kv, ok := pythonDict(trailingDict(state)); ok {
		return r.record(r.parsed(kv, "metrics dict line"), false)
	}
	return nil
}

// field is one name and the text of its value, as a line gives them.
type field struct{ name, text string }

// reading is one value read from a line: missing when the line said nan or inf.
type reading struct {
	name    string
	value   float64
	missing bool
}

// parsed reads the values of fields that name metrics; what is not a finite number is
// warned about (nan and inf as missing values, which take their step).
func (r *Reader) parsed(fs []field, what string) []reading {
	out := make([]reading, 0, len(fs))
	r.set.mu.Lock()
	defer r.set.mu.Unlock()
	for _, f := range fs {
		if !ValidName(f.name) {
			continue
		}
		if isNonFinite(f.text) {
			r.set.warn("%s: %s: %s recorded as missing", what, f.name, f.text)
			out = append(out, reading{name: f.name, missing: true})
			continue
		}
		v, err := ParseValue(f.text)
		if err != nil {
			r.set.warn("%s: %s: %v", what, f.name, err)
			continue
		}
		out = append(out, reading{name: f.name, value: v})
	}
	return out
}

// isNonFinite reports whether s is how Python, C or Go print NaN or an infinity.
func isNonFinite(s string) bool {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return true
	}
	return false
}

// record adds readings to the set, each a new step of its name; with replace, a name of the
// open Keras epoch replaces its last value instead (the same step, drawn again).
func (r *Reader) record(rs []reading, replace bool) []Value {
	var out []Value
	r.set.mu.Lock()
	defer r.set.mu.Unlock()
	for _, x := range rs {
		same := replace && r.open[x.name]
		if !same {
			if _, seen := r.steps[x.name]; !seen {
				r.steps[x.name] = r.base
			}
			r.steps[x.name]++
		}
		if x.missing {
			// Not a value to record, but a step with none: early stopping counts it as the
			// worst, where leaving it out would let a diverged trial run to its end.
			if r.set.observe != nil {
				r.set.observe(x.name, math.NaN(), r.steps[x.name])
			}
			continue
		}
		if !same || !r.set.replaceLast(x.name, x.value) {
			r.set.record(x.name, x.value)
		}
		v := Value{Name: x.name, Step: r.steps[x.name], Value: x.value}
		if r.set.observe != nil {
			r.set.observe(v.Name, v.Value, v.Step)
		}
		out = append(out, v)
	}
	return out
}

// lastState is what a line shows last: a progress bar redrawn with \r or \b shows only the
// text after the last of them.
func lastState(line string) string {
	if i := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); i >= 0 {
		line = line[i+1:]
	}
	line = strings.TrimRight(line, "\r\b")
	if i := strings.LastIndexByte(line, '\b'); i >= 0 {
		line = line[i+1:]
	}
	return line
}

var (
	// kerasHeadRE is how an epoch's last line starts: "293/293 [=====] - 39s ..." (Keras 2),
	// "293/293 ━━━━ 39s ..." (Keras 3), "293/293 - 39s - ..." (verbose=2), or " - 39s - "
	// (Keras before 2.3 with verbose=2).
	kerasHeadRE = lazyre.New(`^\s*(?:(\d+)/(\d+)\s|-\s+\d+m?s\s)`)
	// kerasFieldRE is one "name: value" of the line.
	kerasFieldRE = lazyre.New(`^([A-Za-z_][A-Za-z0-9_.:/-]*): (\S+)$`)
	// kerasEpochRE is the line Keras prints as an epoch starts.
	kerasEpochRE = lazyre.New(`^\s*Epoch \d+/\d+\s*$`)
)

// mayBeKeras reports whether s can match kerasHeadRE or kerasEpochRE at all: after its
// indent, a batch count, " - " or "Epoch". Most lines of most output are none of these and
// run no regexp.
func mayBeKeras(s string) bool {
	s = strings.TrimLeft(s, " \t\n\f\r") // \s, as the regexps read it
	return s != "" && ('0' <= s[0] && s[0] <= '9' || s[0] == '-' || s[0] == 'E')
}

// kerasEpoch reads the metrics of the line Keras prints at an epoch's end; a line of an
// epoch in progress (its batch short of the total) is not one.
func kerasEpoch(s string) ([]field, bool) {
	if !mayBeKeras(s) {
		return nil, false
	}
	m := kerasHeadRE.FindStringSubmatch(s)
	if m == nil || m[1] != m[2] {
		return nil, false
	}
	var out []field
	for seg := range strings.SplitSeq(s, " - ") {
		if f := kerasFieldRE.FindStringSubmatch(strings.TrimSpace(seg)); f != nil && f[1] != "ETA" {
			out = append(out, field{f[1], f[2]})
		}
	}
	return out, len(out) > 0
}

// kerasBoundary reports whether a line starts a new epoch: its header, or a batch short of
// the total.
func kerasBoundary(s string) bool {
	if !mayBeKeras(s) {
		return false
	}
	if kerasEpochRE.MatchString(s) {
		return true
	}
	m := kerasHeadRE.FindStringSubmatch(s)
	return m != nil && m[1] != m[2]
}

// pythonDict reads a line that is a dict of quoted names and numbers, as Python prints it
// ({'eval_loss': 0.41, 'epoch': 1.0}, Hugging Face's Trainer) or as JSON. Any other value
// makes it not a metrics line.
func pythonDict(s string) ([]field, bool) {
	s = strings.TrimSpace(s)
	inner, ok := strings.CutPrefix(s, "{")
	if inner, ok = strings.CutSuffix(inner, "}"); !ok || strings.TrimSpace(inner) == "" {
		return nil, false
	}
	var out []field
	for inner != "" {
		inner = strings.TrimLeft(inner, " ")
		if inner == "" || (inner[0] != '\'' && inner[0] != '"') {
			return nil, false
		}
		end := strings.IndexByte(inner[1:], inner[0])
		if end < 0 {
			return nil, false
		}
		name := inner[1 : 1+end]
		rest, ok := strings.CutPrefix(strings.TrimLeft(inner[2+end:], " "), ":")
		if !ok {
			return nil, false
		}
		text, after, _ := strings.Cut(rest, ",")
		text = strings.TrimSpace(text)
		if !looksNumeric(text) {
			return nil, false
		}
		out = append(out, field{name, text})
		inner = after
	}
	return out, len(out) > 0
}

// trailingDict is the dict a line ends with: the whole line, or what follows a progress bar
// that tqdm left without a newline ("100%|███| 50/50 [00:10<00:00]{'loss': 0.69}").
func trailingDict(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return s
	}
	if i := max(strings.LastIndex(s, "{'"), strings.LastIndex(s, `{"`)); i > 0 {
		return s[i:]
	}
	return s
}

// looksNumeric reports whether s is written as a number (nan and inf included), so that a
// dict with other values is not taken for metrics.
func looksNumeric(s string) bool {
	if isNonFinite(s) {
		return true
	}
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789.eE+-", c) {
			return false
		}
	}
	return strings.ContainsAny(s, "0123456789")
}

// pattern reads the metrics one metric-pattern finds in a line.
func (r *Reader) pattern(p *Pattern, line string) []reading {
	var fs []field
	for _, m := range p.re.FindAllStringSubmatchIndex(line, -1) {
		if p.pairs {
			n, v := p.re.SubexpIndex("name"), p.re.SubexpIndex("value")
			if m[2*n] >= 0 && m[2*v] >= 0 {
				fs = append(fs, field{line[m[2*n]:m[2*n+1]], strings.TrimSpace(line[m[2*v]:m[2*v+1]])})
			}
			continue
		}
		for i, g := range p.groups {
			if g != "" && i > 0 && m[2*i] >= 0 {
				fs = append(fs, field{g, strings.TrimSpace(line[m[2*i]:m[2*i+1]])})
			}
		}
	}
	if len(fs) == 0 {
		return nil
	}
	what := "metric-pattern " + abbreviate([]byte(p.text))
	r.set.mu.Lock()
	for _, f := range fs {
		if !ValidName(f.name) {
			r.set.warn("%s: %q is not a metric name: left out", what, f.name)
		}
	}
	r.set.mu.Unlock()
	return r.parsed(fs, what)
}
