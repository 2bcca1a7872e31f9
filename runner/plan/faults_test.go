package plan

import (
	"slices"
	"testing"
)

// TestFaultsInherit: a block's diverged-on and fail-fast are its own over config's, config's
// default auto and 3; fail-fast: off is 0 (off) in the plan.
func TestFaultsInherit(t *testing.T) {
	p := mustLoadYAML(t, `
config:
  fail-fast: 5
tasks:
  - name: own
    diverged-on: [loss, acc]
    fail-fast: off
    parallel-tasks:
      - {name: a, cmd: "true"}
  - name: inherits
    parallel-tasks:
      - {name: b, cmd: "true"}
`, LoadOptions{})
	own, inherits := p.Tasks[0].Faults, p.Tasks[1].Faults
	if own == nil || !slices.Equal(own.DivergedOn.Names, []string{"loss", "acc"}) || own.FailFast != 0 {
		t.Errorf("own: %+v, want diverged-on [loss, acc] and fail-fast off", own)
	}
	if inherits == nil || inherits.DivergedOn.String() != "auto" || inherits.FailFast != 5 {
		t.Errorf("inherits: %+v, want auto and config's 5", inherits)
	}
	if p.Tasks[0].Parallel[0].Faults != own || p.Tasks[1].Parallel[0].Faults != inherits {
		t.Error("a block's trials do not point to its rules")
	}
	if f := mustLoadYAML(t, "tasks: [{cmd: \"true\"}]\n", LoadOptions{}).ConfigFaults(); f.FailFast != 3 || f.DivergedOn.String() != "auto" {
		t.Errorf("defaults: %+v, want auto and 3", f)
	}
}
