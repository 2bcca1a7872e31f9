// Package metric reads what a trial reports about itself: a JSON file of metrics (numbers,
// or lists of numbers per epoch) and "runall-metric NAME=VALUE" lines on its stdout. It
// reads strictly: what it cannot read becomes a warning that says why, never a guess.
package metric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/runall/runall/internal/lazyre"
)

// LinePrefix starts a metric line on a task's stdout: "runall-metric loss=0.31 acc=0.9".
const LinePrefix = "runall-metric"

var nameRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_.:/-]*$`)

// ValidName reports whether s may name a metric: letters, digits, _ . : / -, starting with
// a letter or _.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// Set is one task's metrics as they arrive. Safe for concurrent use.
type Set struct {
	mu       sync.Mutex
	last     map[string]float64
	series   map[string]*series
	warnings []string
	dropped  map[string]bool                        // names left out by a bound, each warned about once
	observe  func(name string, v float64, step int) // told each value as it is added
}

// Observe has fn told each value as it is added (its step counts the metric's values from
// 1), on the goroutine that added it, under the set's lock: fn must not call the set. A step
// a trial printed nan or inf at is told too, with v NaN: it took its step, with no value.
func (s *Set) Observe(fn func(name string, v float64, step int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe = fn
}

// maxWarnings bounds what a task that prints a thousand bad lines gets recorded.
const maxWarnings = 20

func (s *Set) warn(format string, args ...any) {
	if len(s.warnings) < maxWarnings {
		s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
	} else if len(s.warnings) == maxWarnings {
		s.warnings = append(s.warnings, "more metric warnings left out")
	}
}

// Add records one value of a metric, within the bounds (MaxNames, MaxNameLen, MaxPoints):
// what a live report keeps of a task that has not ended (runner/ledger_live.go).
func (s *Set) Add(name string, v float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(name, v)
}

// add records one value of a metric, within the bounds: every source of metrics (lines,
// files, recognisers of trainers' output) adds through it, s.mu held.
func (s *Set) add(name string, v float64) {
	if !s.record(name, v) {
		return
	}
	if s.observe != nil {
		s.observe(name, v, s.series[name].seen)
	}
}

// record adds a value within the bounds without telling the observer: a Reader tells it
// with steps of its own (a missing value takes one); a metrics file's values are no steps.
// It reports whether the value was kept.
func (s *Set) record(name string, v float64) bool {
	if !s.admit(name) {
		return false
	}
	s.last[name] = v
	sr := s.series[name]
	if sr == nil {
		sr = &series{}
		s.series[name] = sr
	}
	sr.add(v)
	return true
}

// replaceLast replaces the last value of name (a step drawn again); false when there is none.
func (s *Set) replaceLast(name string, v float64) bool {
	sr := s.series[name]
	if sr == nil || sr.seen == 0 {
		return false
	}
	if (sr.seen-1)%sr.stride == 0 && len(sr.points) > 0 {
		sr.points[len(sr.points)-1] = v
	}
	sr.last, s.last[name] = v, v
	if v < sr.min.v {
		sr.min = extreme{v, sr.seen - 1}
	}
	if v > sr.max.v {
		sr.max = extreme{v, sr.seen - 1}
	}
	return true
}

// admit reports whether a value of name is kept: its name is short enough and either known
// or one more within MaxNames. A name left out is warned about once.
func (s *Set) admit(name string) bool {
	if s.last == nil {
		s.last, s.series = map[string]float64{}, map[string]*series{}
	}
	if _, known := s.last[name]; known {
		return true
	}
	var why string
	switch {
	case len(name) > MaxNameLen:
		why = fmt.Sprintf("metric %q: a name longer than %d bytes: left out", abbreviate([]byte(name)), MaxNameLen)
	case len(s.last) >= MaxNames:
		why = fmt.Sprintf("metric %s: more than %d metric names: this and later new names left out", name, MaxNames)
	default:
		return true
	}
	if s.dropped == nil {
		s.dropped = map[string]bool{}
	}
	if !s.dropped[name] && (len(s.dropped) == 0 || len(name) > MaxNameLen) {
		s.warn("%s", why)
	}
	s.dropped[name] = true
	return false
}

// IsLine reports whether a line of output is a metric line.
func IsLine(line string) bool {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), LinePrefix)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// lineValues reads a metric line's values without recording them; what it cannot read is
// warned about. A nan or inf is a missing value.
func (s *Set) lineValues(line string) []reading {
	s.mu.Lock()
	defer s.mu.Unlock()
	fields := strings.Fields(strings.TrimLeft(line, " \t")[len(LinePrefix):])
	if len(fields) == 0 {
		s.warn("metric line %q has no NAME=VALUE", line)
	}
	var out []reading
	for _, f := range fields {
		name, val, ok := strings.Cut(f, "=")
		v, err := ParseValue(val)
		switch {
		case !ok || !ValidName(name):
			s.warn("metric line: %q: want NAME=VALUE, NAME of letters, digits, _ . : / -", f)
		case err != nil:
			s.warn("metric line: %s: %v", name, err)
			if isNonFinite(val) {
				out = append(out, reading{name: name, missing: true})
			}
		default:
			out = append(out, reading{name: name, value: v})
		}
	}
	return out
}

// File takes the content of a metrics file: a JSON object whose values are numbers or
// lists of numbers (per epoch: the last is the value). A list replaces the series of its
// name; a number is the latest value. A null value (or NaN) is warned about and left out.
// name is the file's path, for warnings.
func (s *Set) File(name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(nonFinite(data), &obj); err != nil {
		s.warn("metrics file %s: not a JSON object of metrics: %v", name, err)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !ValidName(k) {
			s.warn("metrics file %s: %q is not a metric name: left out", name, k)
			continue
		}
		s.fileValue(name, k, obj[k])
	}
}

func (s *Set) fileValue(file, k string, raw json.RawMessage) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		s.warn("metrics file %s: %s: null, NaN or Infinity is not a number: left out", file, k)
		return
	}
	var num float64
	if json.Unmarshal(raw, &num) == nil {
		if s.admit(k) {
			s.last[k] = num // the latest value; a series from metric lines stays for plots
		}
		return
	}
	var list []*float64
	if err := json.Unmarshal(raw, &list); err != nil {
		s.warn("metrics file %s: %s: want a number or a list of numbers, got %s", file, k, abbreviate(raw))
		return
	}
	var vals []float64
	for _, v := range list {
		if v != nil {
			vals = append(vals, *v)
		}
	}
	if len(vals) < len(list) {
		s.warn("metrics file %s: %s: %d of %d values are null, NaN or Infinity: left out", file, k, len(list)-len(vals), len(list))
	}
	if len(vals) == 0 {
		s.warn("metrics file %s: %s: no number in the list", file, k)
		return
	}
	if !s.admit(k) {
		return
	}
	s.last[k] = vals[len(vals)-1]
	sr := &series{}
	for _, v := range vals {
		sr.add(v)
	}
	s.series[k] = sr // a file's values are no steps: the observer is not told
}

func abbreviate(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// nonFinite turns Python's NaN, Infinity and -Infinity (json.dump writes them, JSON has no
// such numbers) into null outside strings, so that the rest of the file can be read.
func nonFinite(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	out := make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\' && i+1 < len(data):
			out = append(out, c, data[i+1])
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString:
			if n := nonFiniteWord(data[i:]); n > 0 {
				out = append(out, "null"...)
				i += n - 1
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// nonFiniteWord is the length of the NaN or Infinity that b starts with, 0 when none.
func nonFiniteWord(b []byte) int {
	for _, w := range []string{"-Infinity", "Infinity", "NaN"} {
		if bytes.HasPrefix(b, []byte(w)) {
			return len(w)
		}
	}
	return 0
}

// Result is what a Set holds: each metric's latest value, the series of those reported
// more than once, and the warnings. It resets nothing.
func (s *Set) Result() (last map[string]float64, series map[string][]float64, warnings []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last) > 0 {
		last = maps.Clone(s.last)
	}
	warnings = slices.Clone(s.warnings)
	for _, k := range slices.Sorted(maps.Keys(s.series)) {
		sr := s.series[k]
		if sr.seen <= 1 {
			continue
		}
		if series == nil {
			series = map[string][]float64{}
		}
		series[k] = sr.values()
		if sr.seen > MaxPoints {
			warnings = append(warnings, fmt.Sprintf("metric %s: %d points, more than %d: kept the first, last, lowest, highest and an even spread", k, sr.seen, MaxPoints))
		}
	}
	return last, series, warnings
}

// Warn records a warning about the task's metrics found elsewhere (its file missing, say).
func (s *Set) Warn(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warn(format, args...)
}
