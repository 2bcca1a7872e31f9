package plan

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runall/runall/runner/taskfile"
)

func TestFlagNames(t *testing.T) {
	tests := []struct {
		name  string
		cmds  []string
		names []string // "" where the trial keeps its command as its name
	}{
		{"the tutorial's two lines", []string{
			"python train.py --expid 1 --batch_size 128 --dropout 0.50 --learning_rate 0.01",
			"python train.py --expid 2 --batch_size 128 --dropout 0.25 --learning_rate 0.01"},
			[]string{"expid=1 dropout=0.50", "expid=2 dropout=0.25"}},
		{"= and switches", []string{"train --lr=0.1 --fast", "train --lr=0.2", "train --lr 0.3 --fast"},
			[]string{"lr=0.1 fast=true", "lr=0.2", "lr=0.3 fast=true"}},
		{"quotes and operators", []string{`train --tag "a b" --lr 1 > out.log`, `train --tag 'c d' --lr 1 > out.log`},
			[]string{"tag=a b", "tag=c d"}},
		{"a flag given twice: the first names it", []string{"t --a 1 --a 9", "t --a 2 --a 9"}, []string{"a=1", "a=2"}},
		{"no flag differs", []string{"train.sh 1", "train.sh 2"}, []string{"", ""}},
		{"not told apart by flags: names left as they are", []string{"a --x 1", "b --x 1", "c --x 2"}, []string{"x=1", "", "x=2"}},
		{"one trial", []string{"train --lr 1"}, []string{""}},
		{"negative numbers are values", []string{"t --shift -1", "t --shift -2"}, []string{"shift=-1", "shift=-2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var list []*taskfile.Task
			for _, c := range tc.cmds {
				list = append(list, &taskfile.Task{Cmd: c})
			}
			got := flagNames(list)
			for i, rt := range list {
				if got[rt].name != tc.names[i] {
					t.Errorf("trial %d: name %q, want %q", i+1, got[rt].name, tc.names[i])
				}
			}
		})
	}
	named := []*taskfile.Task{{Cmd: "t --a 1", Name: "one"}, {Cmd: "t --a 2", Matrix: []taskfile.MatrixAxis{{Name: "x", Values: []string{"1"}}}}, {Cmd: "t --a 3"}}
	if got := flagNames(named); len(got) != 0 {
		t.Errorf("named and matrix trials were renamed: %v", got)
	}
}

func TestShellWords(t *testing.T) {
	got := shellWords(`a "b c" 'd "e"' f\ g "h\"i" ''`)
	want := []string{"a", "b c", `d "e"`, "f g", `h"i`, ""}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestSampleSpread: n = base^k points put exactly one point in each of n equal bins of each
// key: what a low-discrepancy sequence does and independent draws almost never do.
func TestSampleSpread(t *testing.T) {
	axes := []taskfile.SampleAxis{{Name: "a", Dist: Distribution{Kind: "uniform", Low: 0, High: 1}}, {Name: "b", Dist: Distribution{Kind: "uniform", Low: 0, High: 9}}}
	for _, seed := range []uint64{0, 1, 42} {
		pts := samplePoints(axes, 9, seed)
		binsB := map[int]int{}
		for _, p := range pts {
			v, _ := strconv.ParseFloat(p[1], 64)
			binsB[int(v)]++
		}
		if len(binsB) != 9 {
			t.Errorf("seed %d: b (base 3) fills %d of 9 bins: %v", seed, len(binsB), pts)
		}
		pts = samplePoints(axes[:1], 8, seed)
		binsA := map[int]int{}
		for _, p := range pts {
			v, _ := strconv.ParseFloat(p[0], 64)
			binsA[int(v*8)]++
		}
		if len(binsA) != 8 {
			t.Errorf("seed %d: a (base 2) fills %d of 8 bins: %v", seed, len(binsA), pts)
		}
	}
}

func TestDistributionAt(t *testing.T) {
	tests := []struct {
		d    Distribution
		u    float64
		want string
	}{
		{Distribution{Kind: "uniform", Low: -1, High: 1}, 0.25, "-0.5"},
		{Distribution{Kind: "loguniform", Low: 1e-4, High: 1e-2}, 0.5, "0.001"},
		{Distribution{Kind: "int", Low: 2, High: 4}, 0, "2"},
		{Distribution{Kind: "int", Low: 2, High: 4}, 0.999999, "4"},
		{Distribution{Kind: "int", Low: 2, High: 4}, 0.5, "3"},
		{Distribution{Kind: "choice", Choices: []string{"relu", "tanh"}}, 0.7, "tanh"},
		{Distribution{Kind: "choice", Choices: []string{"relu", "tanh"}}, 1, "tanh"},
	}
	for _, tc := range tests {
		if got := tc.d.At(tc.u); got != tc.want {
			t.Errorf("%+v at %g: %s, want %s", tc.d, tc.u, got, tc.want)
		}
	}
}

// TestSampleDeterministic: the same file and seed give the same trials; another seed others.
func TestSampleDeterministic(t *testing.T) {
	dir := t.TempDir()
	write := func(name, seed string) {
		data := "tasks:\n  - parallel-tasks:\n      - cmd: train --lr <lr> --act <act>\n        sample: {lr: 'loguniform(1e-4, 1)', act: [a, b, c]}\n        trials: 5\n        seed: " + seed + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yml", "3")
	write("b.yml", "4")
	load := func(name string) []string {
		p, err := Load(name, LoadOptions{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tr := range p.Trials() {
			out = append(out, fmt.Sprint(tr.Params))
			if len(tr.Params) != 2 || tr.Params[0].Name != "lr" {
				t.Errorf("params %v", tr.Params)
			}
		}
		return out
	}
	one, two, other := load("a.yml"), load("a.yml"), load("b.yml")
	if !reflect.DeepEqual(one, two) || len(one) != 5 {
		t.Errorf("same file, other trials:\n%q\n%q", one, two)
	}
	if reflect.DeepEqual(one, other) {
		t.Errorf("another seed, the same trials: %q", one)
	}
}

func TestInstantiate(t *testing.T) {
	tmpl := &Task{Name: "train <lr>", Cmd: "train --lr <lr> --act <act>", Metrics: "out/<lr>.json", Key: "k",
		Env: []EnvVar{{Name: "LR", Value: "<lr>"}}, Params: []Param{{Name: "block", Value: "1"}}, Search: &Search{Trials: 3},
		Steps: []*Task{{Name: "eval", Cmd: "eval <lr>", Key: "s"}}}
	got, err := tmpl.Instantiate(4, []Param{{Name: "lr", Value: "0.01"}, {Name: "act", Value: "relu"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "train 0.01" || got.Cmd != `train --lr "${RUNALL_PARAM_lr}" --act "${RUNALL_PARAM_act}"` || got.Metrics != "out/${RUNALL_PARAM_lr}.json" ||
		got.Env[0].Value != "${RUNALL_PARAM_lr}" || got.Search != nil || got.Steps[0].Cmd != `eval "${RUNALL_PARAM_lr}"` || got.Key == tmpl.Key {
		t.Errorf("%+v", got)
	}
	if !reflect.DeepEqual(got.Params, []Param{{Name: "block", Value: "1"}, {Name: "lr", Value: "0.01"}, {Name: "act", Value: "relu"}}) {
		t.Errorf("params %v", got.Params)
	}
	if tmpl.Cmd != "train --lr <lr> --act <act>" || tmpl.Steps[0].Cmd != "eval <lr>" {
		t.Error("the template changed")
	}
	other, _ := tmpl.Instantiate(5, []Param{{Name: "lr", Value: "0.01"}, {Name: "act", Value: "relu"}})
	if other.Key == got.Key {
		t.Error("two trials share a key")
	}
	unnamed, _ := (&Task{Name: "python t.py", Cmd: "python t.py --lr <lr>"}).Instantiate(0, []Param{{Name: "lr", Value: "1"}})
	if unnamed.Name != "python t.py [trial=0 lr=1]" {
		t.Errorf("name %q", unnamed.Name)
	}
}

// TestSearchTrialAsMatrixTrial: a trial a sampler hands out is the task the same child with
// a matrix of those values makes, placeholders filled in the same fields (url included), so
// that a key that takes a placeholder in one takes it in the other; where the matrix's value
// is put into a text that is expanded (or run), the sampler's is a reference to its
// variable, which expands to the same text.
func TestSearchTrialAsMatrixTrial(t *testing.T) {
	const child = `
      - name: m=<m>
        cwd: runs/<m>
        url: https://example.com/<m>/train.sh
        cmd: bash <exec> --m <m>
        log-path: logs/<m>.log
        metrics: out/<m>.json
        tags: [t-<m>]
        env: {M: <m>}
        upload: [{from: out/<m>, to: "s3://b/<m>/"}]
`
	head := "config: {objective: {metric: acc, mode: max}}\ntasks:\n  - name: sweep\n    parallel-tasks:" + child
	matrix := mustLoadYAML(t, head+"        matrix: {m: [x1]}\n", LoadOptions{}).Tasks[0].Parallel[0]
	tmpl := mustLoadYAML(t, head+"        trials: 1\n        search: {ask: a, tell: b}\n", LoadOptions{}).Tasks[0].Parallel[0]
	got, err := tmpl.Instantiate(0, []Param{{Name: "m", Value: "x1"}})
	if err != nil {
		t.Fatal(err)
	}
	expand := func(s string) string {
		return Expand(strings.ReplaceAll(s, `"`, ""), func(name string) (string, bool) { return "x1", name == ParamVar("m") })
	}
	got.Cmd, got.Cwd, got.URL, got.Metrics = expand(got.Cmd), expand(got.Cwd), expand(got.URL), expand(got.Metrics)
	got.Env[0].Value = expand(got.Env[0].Value)
	got.Upload[0].From, got.Upload[0].To = expand(got.Upload[0].From), expand(got.Upload[0].To)

	// What only the way a trial is made decides: its identity, its position, its template.
	for _, c := range []*Task{matrix, got} {
		c.ID, c.Key, c.Pos, c.KeyPos, c.Search = 0, "", Pos{}, nil, nil
		for i := range c.Upload {
			c.Upload[i].Pos, c.Upload[i].FromPos, c.Upload[i].ToPos = Pos{}, Pos{}, Pos{}
		}
	}
	if !reflect.DeepEqual(got, matrix) {
		t.Errorf("search trial:\n%+v\nmatrix trial:\n%+v", got, matrix)
	}
}

// TestSampleNoLattice: sampled values keep the sequence's spread and lose its lattice: no two
// draws of loguniform(1e-4, 1) are a power of ten apart (0.140223, 0.0140223, 0.00140223 were),
// nor any two of uniform(0, 1) a fixed distance apart in a row, for any seed.
func TestSampleNoLattice(t *testing.T) {
	axes := []taskfile.SampleAxis{{Name: "lr", Dist: Distribution{Kind: "loguniform", Low: 1e-4, High: 1}}, {Name: "x", Dist: Distribution{Kind: "uniform", Low: 0, High: 1}}}
	for _, seed := range []uint64{0, 1, 2, 42, 1 << 40} {
		pts := samplePoints(axes, 64, seed)
		vals := make([]float64, len(pts))
		xs := make([]float64, len(pts))
		for i, p := range pts {
			vals[i], _ = strconv.ParseFloat(p[0], 64)
			xs[i], _ = strconv.ParseFloat(p[1], 64)
		}
		for i := range vals {
			for j := range i {
				decades := math.Log10(vals[i] / vals[j])
				if r := math.Round(decades); r != 0 && math.Abs(decades-r) < 1e-5 {
					t.Errorf("seed %d: draws %d and %d (%g, %g) are %g decades apart", seed, j, i, vals[j], vals[i], r)
				}
			}
		}
		steps := map[string]int{}
		for i := 1; i < len(xs); i++ {
			steps[strconv.FormatFloat(math.Abs(xs[i]-xs[i-1]), 'g', 4, 64)]++
		}
		for step, n := range steps {
			if n > 3 {
				t.Errorf("seed %d: %d steps of %s between consecutive draws of uniform(0, 1): a lattice", seed, n, step)
			}
		}
	}
}

// TestInstantiateOnOOM (issue 45): a search: trial with on-oom is made with a space its
// param can be halved in (its variant runs the halved value, its identity its own); the
// sampler's params must hold the param halve: names, as a whole number.
func TestInstantiateOnOOM(t *testing.T) {
	tmpl := &Task{Name: "b=<batch>", Cmd: "train --batch <batch> --lr <lr>", Key: "k", Search: &Search{Trials: 3},
		Checkpoint: &Checkpoint{Dir: "ck"},
		Faults:     &Faults{OnOOM: &taskfile.OnOOM{Halve: "batch", Min: 8, Times: 3}}}
	got, err := tmpl.Instantiate(2, []Param{{Name: "batch", Value: "112"}, {Name: "lr", Value: "0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Space == nil {
		t.Fatal("no space to halve its param in")
	}
	v := got.Variant([]Param{{Name: "batch", Value: "56"}, {Name: "lr", Value: "0.1"}})
	if v.Name != got.Name || v.Key != got.Key || v.Checkpoint != got.Checkpoint || ParamValue(v.Params, "batch") != "56" ||
		v.Cmd != got.Cmd || v.Search != nil {
		t.Errorf("variant %+v, want %+v with batch 56", v, got)
	}
	for _, tc := range []struct {
		params []Param
		want   string
	}{
		{[]Param{{Name: "lr", Value: "0.1"}}, "on-oom: halve: <batch> is not among the params the sampler gave (<lr>)"},
		{[]Param{{Name: "batch", Value: "11.5"}}, `on-oom: halve: <batch> is "11.5" from the sampler: want a whole number`},
	} {
		if _, err := tmpl.Instantiate(0, tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.params, err, tc.want)
		}
	}
}
