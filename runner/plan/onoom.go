package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/taskfile"
)

// onOOMOf is trial rt's on-oom: its own, else its block's (in).
func onOOMOf(rt *taskfile.Task, in inherited) *taskfile.OnOOM {
	if rt.OnOOM != nil {
		return rt.OnOOM
	}
	if in.faults != nil {
		return in.faults.OnOOM
	}
	return nil
}

// withOnOOM is t's rules with its own on-oom, where it sets one.
func withOnOOM(t *Task, rt *taskfile.Task) {
	if rt.OnOOM == nil {
		return
	}
	f := Faults{}
	if t.Faults != nil {
		f = *t.Faults
		f.block = t.Faults.Block() // still its block's trial: fail-fast counts the block's trials by it
	}
	f.OnOOM = rt.OnOOM
	t.Faults = &f
}

// checkOnOOM reports an on-oom whose param is not one of trial t's (matrix:, sample:,
// for-each's <item>), or whose value there is no whole number of at least min. A search:
// trial's params come from its sampler: halve: is taken on trust, and checked as it runs.
func checkOnOOM(src *sources, rt *taskfile.Task, t *Task, o *taskfile.OnOOM) {
	if o == nil || rt.Search != nil {
		return
	}
	i := slices.IndexFunc(t.Params, func(p Param) bool { return p.Name == o.Halve })
	if i < 0 {
		var names []string
		for _, p := range t.Params {
			names = append(names, "<"+p.Name+">")
		}
		src.problems = append(src.problems, Problem{Pos: src.pos(o.Pos),
			Msg: "on-oom: halve: <" + o.Halve + "> is not a param of trial " + strconv.Quote(t.Name) + " (its params: " + joinOrNone(names) + ")"})
		return
	}
	if n, err := strconv.Atoi(t.Params[i].Value); err != nil || n < o.Min {
		src.problems = append(src.problems, Problem{Pos: src.pos(o.Pos),
			Msg: "on-oom: halve: <" + o.Halve + "> is " + strconv.Quote(t.Params[i].Value) + " in trial " + strconv.Quote(t.Name) +
				": want a whole number of at least min (" + strconv.Itoa(o.Min) + ")"})
	}
}

func joinOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// OnOOMOf is task t's on-oom rule; nil when it has none (or t is nil).
func OnOOMOf(t *Task) *taskfile.OnOOM {
	if t == nil || t.Faults == nil {
		return nil
	}
	return t.Faults.OnOOM
}

// ParamValue is the value of the param called name among params; "" when none is.
func ParamValue(params []Param, name string) string {
	for _, p := range params {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}
