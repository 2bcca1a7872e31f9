package checkprint

import (
	"fmt"
	"strings"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/taskfile"
)

// faultRules are the rules for trials that go wrong where they differ from the defaults
// (diverged-on: auto, fail-fast: 3, the hang keys': taskfile.DefaultHang): "diverged-on [loss], fail-fast off"; nil when both are
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
	return append(out, hangRules(f.Hang)...)
}

// hangRules are the hang keys that differ from their defaults.
func hangRules(h taskfile.Hang) []string {
	d := taskfile.DefaultHang()
	word := func(v time.Duration) string {
		switch v {
		case taskfile.HangAuto:
			return "auto"
		case taskfile.HangOff:
			return "off"
		}
		return v.String()
	}
	var out []string
	add := func(key, v, def string) {
		if v != def {
			out = append(out, key+" "+v)
		}
	}
	add("hang-after", word(h.After), word(d.After))
	if h.AfterStart != 0 {
		add("hang-after-start", word(h.AfterStart), "")
	}
	add("hang-floor", word(h.Floor), word(d.Floor))
	if h.Retries != nil {
		add("hang-retries", fmt.Sprint(*h.Retries), fmt.Sprint(*d.Retries))
	}
	np := fmt.Sprint(h.NoProgress)
	if h.NoProgress == taskfile.NoProgressOff {
		np = "off"
	}
	add("no-progress-restarts", np, fmt.Sprint(d.NoProgress))
	add("gpu-release-wait", word(h.ReleaseWait), word(d.ReleaseWait))
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
	if own.FailFast != cfg.FailFast || own.DivergedOn.String() != cfg.DivergedOn.String() ||
		strings.Join(hangRules(own.Hang), ",") != strings.Join(hangRules(cfg.Hang), ",") {
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
