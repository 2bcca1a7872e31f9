package hostres

import (
	"maps"
	"path/filepath"
	"testing"

	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
)

// TestLearnedHostMemoryNamesMeasured: learned_host_memory names the trial the need was
// measured from, not the group's first trial in the file (which another may stand in for:
// the first to start learns).
func TestLearnedHostMemoryNamesMeasured(t *testing.T) {
	group := "g"
	spec := &plan.HostSpec{Auto: true, Group: group}
	p := &plan.Plan{Tasks: []*plan.Task{{Name: "sweep", Parallel: []*plan.Task{
		{Name: "first", Cmd: "x", Host: spec}, {Name: "measured", Cmd: "x", Host: spec}}}}}
	h := history.New(filepath.Join(t.TempDir(), "state.json"))
	h.Host().SetLearned(group, "measured", 1<<30)
	got := (&Resource{hist: h}).learnedByName(p)
	if want := map[string]uint64{"measured": 1 << 30}; !maps.Equal(got, want) {
		t.Errorf("learned host memory %v, want %v", got, want)
	}
}
