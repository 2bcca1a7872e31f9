package shard

import (
	"slices"
	"testing"

	"github.com/runall/runall/runner/plan"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/4", Shard{0, 4}, true}, {" 3/4 ", Shard{3, 4}, true}, {"0/1", Shard{0, 1}, true},
		{"4/4", Shard{}, false}, {"-1/4", Shard{}, false}, {"1/0", Shard{}, false}, {"1", Shard{}, false}, {"a/b", Shard{}, false},
	} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// Trial k of the file, counting every block's children, runs in shard k mod N; setup tasks
// run in every shard, and a block left with no trial is dropped.
func TestApply(t *testing.T) {
	task := func(name string) *plan.Task { return &plan.Task{Name: name, Cmd: "true"} }
	p := &plan.Plan{Tasks: []*plan.Task{task("setup"),
		{Name: "b1", Parallel: []*plan.Task{task("t0"), task("t1"), task("t2")}},
		{Name: "b2", Parallel: []*plan.Task{task("t3")}}}}
	names := func(p *plan.Plan) []string {
		var out []string
		plan.Walk(p.Tasks, func(t *plan.Task) { out = append(out, t.Name) })
		return out
	}
	for s, want := range map[Shard][]string{
		{0, 2}: {"setup", "b1", "t0", "t2"},
		{1, 2}: {"setup", "b1", "t1", "b2", "t3"},
		{0, 1}: {"setup", "b1", "t0", "t1", "t2", "b2", "t3"},
	} {
		if got := names(Apply(p, s)); !slices.Equal(got, want) {
			t.Errorf("shard %v: %v, want %v", s, got, want)
		}
	}
	if got := len(p.Tasks[1].Parallel); got != 3 {
		t.Errorf("Apply changed the plan it was given: block b1 has %d trials", got)
	}
}
