package plan

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSmallerPoints: the values the task file's keys take are read as written, or refused
// with the reason: a whole number is decimal digits (grace: 2.5 was taken as 2), a size is
// digits with a point and a unit, below 2^63 bytes (memory: 1_000 and
// 9223372036854775808 were taken), int() refuses a range past 2^52 saying so (it said
// "LOW at most HIGH"), uniform() over ±1.7e308 draws finite numbers (it drew infinities).
func TestSmallerPoints(t *testing.T) {
	early := "config:\n  objective: {metric: a, mode: max}\n  early-stop: {method: asha, grace: %s}\ntasks:\n  - name: s\n    parallel-tasks: [{cmd: x}]\n"
	mem := "tasks:\n  - cmd: x\n    memory: %s\n"
	smp := "tasks:\n  - parallel-tasks:\n      - cmd: echo <a>\n        sample: {a: '%s'}\n        trials: 3\n"
	for _, tc := range []struct{ file, value, problem string }{
		{early, "2.5", "grace: want a whole number of at least 1 (decimal digits)"},
		{early, "0x10", "grace: want a whole number"},
		{early, "1_0", "grace: want a whole number"},
		{early, "3", ""},
		{mem, "1_000", "memory: want the host memory"},
		{mem, "9223372036854775808", "memory: want the host memory"},
		{mem, "1e30", "memory: want the host memory"},
		{mem, "1.5GiB", ""},
		{smp, "int(0, 9223372036854775807)", "LOW and HIGH must be within ±4503599627370496 (2^52)"},
		{smp, "int(3, 2)", "LOW at most HIGH"},
	} {
		text := strings.Replace(tc.file, "%s", tc.value, 1)
		_, err := loadYAML(t, text, LoadOptions{})
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s: %v", tc.value, err)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
			t.Errorf("%s: got %v, want %q", tc.value, err, tc.problem)
		}
	}
	p := mustLoadYAML(t, strings.Replace(smp, "%s", "uniform(-1.7e308, 1.7e308)", 1), LoadOptions{})
	for _, tr := range p.Tasks[0].Parallel {
		v, err := strconv.ParseFloat(tr.Params[0].Value, 64)
		if err != nil || math.IsInf(v, 0) {
			t.Errorf("uniform(-1.7e308, 1.7e308) drew %s", tr.Params[0].Value)
		}
	}
}

// TestReadmeSampleParses: the README's own sample: example loads (its commas inside a flow
// mapping did not).
func TestReadmeSampleParses(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`(sample: \\{[^`]*\\})`").FindSubmatch(b)
	if m == nil {
		t.Fatal("no sample: example in the README")
	}
	file := "tasks:\n  - parallel-tasks:\n      - cmd: train <lr> <layers>\n        " + string(m[1]) + "\n        trials: 27\n"
	if _, err := loadYAML(t, file, LoadOptions{}); err != nil {
		t.Errorf("the README's %s: %v", m[1], err)
	}
}
