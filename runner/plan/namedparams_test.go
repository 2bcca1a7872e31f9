package plan

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/runall/runall/runner/taskfile"
)

// TestNamedTrialsParams: trials written out one by one with names keep their names and get
// params, so that the report can plot them: the flags their commands differ in, else the
// k=v words of their names.
func TestNamedTrialsParams(t *testing.T) {
	tests := []struct {
		name   string
		trials [][2]string // name, cmd
		want   [][]Param
	}{
		{"flags their commands differ in", [][2]string{
			{"lr=0.03 width=128 alpha=0.01", "python train.py --lr 0.03 --width 128 --alpha 0.01 --epochs 9"},
			{"lr=0.1 width=64 alpha=0.01", "python train.py --lr 0.1 --width 64 --alpha 0.01 --epochs 9"}},
			[][]Param{{{Name: "lr", Value: "0.03"}, {Name: "width", Value: "128"}}, {{Name: "lr", Value: "0.1"}, {Name: "width", Value: "64"}}}},
		{"k=v words of their names", [][2]string{
			{"small lr=0.1, wd=1e-4", "./train.sh small 0.1 1e-4"},
			{"big lr=0.01, wd=1e-5", "./train.sh big 0.01 1e-5"}},
			[][]Param{{{Name: "lr", Value: "0.1"}, {Name: "wd", Value: "1e-4"}}, {{Name: "lr", Value: "0.01"}, {Name: "wd", Value: "1e-5"}}}},
		{"nothing to tell them apart by", [][2]string{{"first", "./a.sh"}, {"second", "./b.sh"}}, [][]Param{nil, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var list []*taskfile.Task
			for _, tr := range tc.trials {
				list = append(list, &taskfile.Task{Name: tr[0], Cmd: tr[1]})
			}
			got := flagNames(list)
			for i, rt := range list {
				if got[rt].name != "" {
					t.Errorf("trial %d renamed %q", i+1, got[rt].name)
				}
				if !slices.Equal(got[rt].params, tc.want[i]) {
					t.Errorf("trial %d: params %v, want %v", i+1, got[rt].params, tc.want[i])
				}
			}
		})
	}
}

// TestLogParams: the plan lists the sample: keys drawn log-uniformly, for the report's axes.
func TestLogParams(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.yml")
	body := "tasks:\n  - name: sweep\n    parallel-tasks:\n      - name: t <lr> <wd> <n>\n        cmd: echo <lr> <wd> <n>\n" +
		"        sample: {lr: 'loguniform(1e-4, 1e-3)', wd: 'uniform(0, 1)', n: 'int(1, 4)'}\n        trials: 4\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(file, LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.LogParams, []string{"lr"}) {
		t.Errorf("log params %q, want [lr]", p.LogParams)
	}
}
