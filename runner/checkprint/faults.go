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

// blockFaults is a block's own rules where they differ from config's; nil otherwise.
func blockFaults(p *plan.Plan, t *plan.Task) []string {
	if t.Faults == nil {
		return nil
	}
	cfg, own := p.ConfigFaults(), *t.Faults
	if own.FailFast == cfg.FailFast && own.DivergedOn.String() == cfg.DivergedOn.String() {
		return nil
	}
	return faultRules(own)
}
