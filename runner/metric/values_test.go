package metric

import (
	"strings"
	"testing"
)

// TestMetricValuesPythonPrints (issue: 0x1p-2 and 1_000 are accepted as metric values):
// a value is a decimal number as Python, Keras or a shell print it; hex floats, digit
// separators, a leading + and words are warned about, the same in lines and files.
func TestMetricValuesPythonPrints(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.3021", 0.3021, true}, {"1e-05", 1e-05, true}, {"1.2345e-04", 1.2345e-04, true},
		{"-0.0", 0, true}, {"3", 3, true}, {"1.2345678901234567e+16", 1.2345678901234567e+16, true},
		{"2E3", 2000, true}, {".8", 0.8, true}, {"8.", 8, true},
		{"0x1p-2", 0, false}, {"1_000", 0, false}, {"0x10", 0, false}, {"+1", 1, true}, {"+2.5e-3", 2.5e-3, true}, {"+-1", 0, false}, {"--1", 0, false},
		{"inf", 0, false}, {"Infinity", 0, false}, {"nan", 0, false}, {"1e", 0, false}, {"", 0, false},
		{"1,5", 0, false}, {" 1", 0, false}, {"0b1", 0, false}, {"1e+", 0, false},
	} {
		v, err := ParseValue(tc.in)
		if tc.ok != (err == nil) || v != tc.want {
			t.Errorf("ParseValue(%q) = %v, %v; want %v (accepted: %v)", tc.in, v, err, tc.want, tc.ok)
		}
		var s Set
		s.Line("runall-metric m=" + tc.in)
		last, _, warnings := s.Result()
		if _, has := last["m"]; has != tc.ok || tc.ok == (len(warnings) > 0) {
			t.Errorf("line m=%q: kept %v, warnings %q", tc.in, has, warnings)
		}
	}
	var s Set
	s.File("m.json", []byte(`{"a": 0.5}`))
	s.Line("runall-metric b=0x1p-2 c=1_000")
	last, _, warnings := s.Result()
	if len(last) != 1 || len(warnings) != 2 || !strings.Contains(warnings[0], `"0x1p-2" is not a finite number`) {
		t.Errorf("last %v, warnings %q", last, warnings)
	}
}
