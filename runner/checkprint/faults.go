package checkprint

import (
	"fmt"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/taskfile"
)

// faultRules are the rules for trials that go wrong where they differ from the defaults
// (diverged-on: auto, fail-fast: 3): "diverged-on [loss], fail-fast off"; nil when both are
// the defaults, so that the usual plan prints as before.
func faultRules(f plan.Faults) []string {
	var out []string
	if d := f.DivergedOn.String(); d != "auto" {
		out = append(out, "diverged-on "+d)
	}
	switch f.FailFast {
	case taskfile.DefaultFailFast:
	case 0:
		out = append(out, "fail-fast off")
	default:
		out = append(out, fmt.Sprintf("fail-fast %d", f.FailFast))
	}
	return out
}

// blockFaults is a block's own rules where they differ from config's, and its on-oom; nil
// when it has neither.
func blockFaults(p *plan.Plan, t *plan.Task) []string {
	if t.Faults == nil {
		return nil
	}
	cfg, own := p.ConfigFaults(), *t.Faults
	var rules []string
	if own.FailFast != cfg.FailFast || own.DivergedOn.String() != cfg.DivergedOn.String() {
		rules = faultRules(own)
	}
	if o := own.OnOOM; o != nil {
		rules = append(rules, onOOMRule(o))
	}
	return rules
}

// onOOMRule says on-oom: "on-oom halves <batch> down to 8, at most 3 times, its checkpoint
// dropped".
func onOOMRule(o *taskfile.OnOOM) string {
	kept := "dropped"
	if o.KeepCheckpoint {
		kept = "kept"
	}
	return fmt.Sprintf("on-oom halves <%s> down to %d, at most %d times, its checkpoint %s", o.Halve, o.Min, o.Times, kept)
}
