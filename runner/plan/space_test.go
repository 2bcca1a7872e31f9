package plan

import (
	"strings"
	"testing"
)

// TestPBTVariant (issue 27, point 4): a trial under pbt runs on with new values through its
// placeholders: the command, env and metrics file change, its name and identity do not; a
// trial of another rule has no space.
func TestPBTVariant(t *testing.T) {
	p, err := Load("valid/rounds.yml", LoadOptions{Dir: taskfileDir})
	if err != nil {
		t.Fatal(err)
	}
	var pbt, sha *Task
	for _, b := range p.Tasks {
		switch b.Name {
		case "pbt":
			pbt = b.Parallel[0]
		case "sha":
			sha = b.Parallel[0]
		}
	}
	if sha.Space != nil {
		t.Errorf("a trial under sha has a space: %+v", sha.Space)
	}
	if pbt.Space == nil || len(pbt.Space.Axes) != 3 {
		t.Fatalf("pbt trial's space: %+v", pbt.Space)
	}
	v := pbt.Variant([]Param{{Name: "lr", Value: "0.05"}, {Name: "alpha", Value: "0.5"}, {Name: "hidden", Value: "64"}})
	own := strings.TrimPrefix(pbt.Checkpoint.Dir, "ckpt/pbt/")
	// sample: values reach the command as data (issue 34), the trial's own directory as text.
	if want := `python train.py --lr "${RUNALL_PARAM_lr}" --alpha "${RUNALL_PARAM_alpha}" --hidden "${RUNALL_PARAM_hidden}" --ckpt ckpt/pbt/` + own; v.Cmd != want {
		t.Errorf("variant runs %q, want %q", v.Cmd, want)
	}
	if want := "python train.py --lr 0.05 --alpha 0.5 --hidden 64 --ckpt ckpt/pbt/" + own; v.ShownCmd() != want {
		t.Errorf("variant shown as %q, want %q", v.ShownCmd(), want)
	}
	if v.Checkpoint.Dir != pbt.Checkpoint.Dir {
		t.Errorf("variant's checkpoint %q, want the trial's own %q", v.Checkpoint.Dir, pbt.Checkpoint.Dir)
	}
	if v.Name != pbt.Name || v.Key != pbt.Key || v.ID != pbt.ID {
		t.Errorf("variant is %q %s %d, want the trial's own name, key and id: %q %s %d", v.Name, v.Key, v.ID, pbt.Name, pbt.Key, pbt.ID)
	}
	if strings.Contains(pbt.Cmd, "0.05") {
		t.Errorf("the trial itself changed: %q", pbt.Cmd)
	}
	if sha.Variant(nil) != sha {
		t.Error("a trial without a space is its own variant")
	}
}

// TestAxisPerturb: a sampled number is multiplied and kept within its key's range; a list
// moves to a neighbour; a value that is not of the space is refused.
func TestAxisPerturb(t *testing.T) {
	lr := Axis{name: "lr", dist: &Distribution{Kind: "loguniform", Low: 0.001, High: 0.1}}
	layers := Axis{name: "layers", dist: &Distribution{Kind: "int", Low: 2, High: 8}}
	grid := Axis{name: "lr", values: []string{"0.001", "0.01", "0.1"}}
	act := Axis{name: "act", values: []string{"relu", "tanh", "gelu"}}
	tests := []struct {
		a     Axis
		value string
		f     float64
		want  string
		ok    bool
	}{
		{lr, "0.01", 0.8, "0.008", true},
		{lr, "0.09", 1.25, "0.1", true},
		{lr, "x", 1.25, "", false},
		{layers, "4", 1.25, "5", true},
		{layers, "8", 1.25, "8", true},
		{grid, "0.01", 1.25, "0.1", true},
		{grid, "0.001", 0.8, "0.001", true},
		{act, "tanh", 1.25, "gelu", true},
		{act, "relu", 0.8, "relu", true},
		{act, "swish", 0.8, "", false},
	}
	for _, tc := range tests {
		got, ok := tc.a.Perturb(tc.value, tc.f)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %s ×%g: %q %v, want %q %v", tc.a.name, tc.value, tc.f, got, ok, tc.want, tc.ok)
		}
	}
	if got := act.Draw(0.99); got != "gelu" {
		t.Errorf("draw 0.99 of %v: %q", act.values, got)
	}
}

// TestPBTListParamMovesToNeighbour (issue 34, rule 3): pbt moves a value written as a list
// to a neighbour in its list, numbers as words (width: [8, 32, 128] became --width 102.4); a
// whole number of an int distribution stays whole, and a sampled value stays in its range.
func TestPBTListParamMovesToNeighbour(t *testing.T) {
	width := Axis{name: "width", values: []string{"8", "32", "128"}}
	layers := Axis{name: "layers", dist: &Distribution{Kind: "int", Low: 1, High: 12}}
	wd := Axis{name: "wd", dist: &Distribution{Kind: "uniform", Low: 0, High: 0.5}}
	for _, tc := range []struct {
		a           Axis
		value, want string
		f           float64
	}{
		{width, "128", "32", 0.8}, {width, "32", "128", 1.25}, {width, "8", "32", 1.2}, {width, "8", "8", 0.8},
		{width, "128", "128", 1.25}, {layers, "3", "4", 1.25}, {layers, "7", "6", 0.8}, {layers, "11", "12", 1.2},
		{wd, "0.45", "0.5", 1.2},
	} {
		if got, ok := tc.a.Perturb(tc.value, tc.f); !ok || got != tc.want {
			t.Errorf("%s %s ×%g: %q %v, want %q", tc.a.name, tc.value, tc.f, got, ok, tc.want)
		}
	}
}
