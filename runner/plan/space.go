package plan

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/taskfile"
)

// A trial of a block under population-based training (early-stop: {method: pbt}) changes
// its values as it runs: at an exploit it continues from another trial's checkpoint with
// that trial's values, perturbed or drawn again from the space its own were drawn from. Its
// Space is that space and the task as written, so that runall can make the command it runs
// with the new values through the same placeholders.

// Name is the key.
func (a Axis) Name() string { return a.name }

// Draw is the key's value at u in [0, 1): a list's item, a distribution's value.
func (a Axis) Draw(u float64) string {
	if a.dist != nil {
		return a.dist.At(u)
	}
	return a.values[min(int(u*float64(len(a.values))), len(a.values)-1)]
}

// Perturb multiplies a number of a sampled distribution by f, kept within its range (an
// int rounded: a whole number stays whole); a value written as a list (matrix, or a sample
// list), numbers or words, moves to its neighbour in the list: the next item for f above 1,
// the one before else, as Ray Tune's PBT shifts a categorical value by one. A list's number
// is never multiplied: --width 102.4 from [8, 32, 128] is no value the trial was written for.
// False when value cannot be read.
func (a Axis) Perturb(value string, f float64) (string, bool) {
	if d := a.dist; d != nil {
		x, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return "", false
		}
		v := min(max(x*f, d.Low), d.High)
		if d.Kind == "int" {
			return strconv.FormatInt(int64(math.Round(v)), 10), true
		}
		return taskfile.FormatSample(v), true
	}
	i := slices.Index(a.values, value)
	if i < 0 {
		return "", false
	}
	if f > 1 {
		return a.values[min(i+1, len(a.values)-1)], true
	}
	return a.values[max(i-1, 0)], true
}

// EarlyStopAxes is the space as the rule sees it.
func (s *Space) EarlyStopAxes() []earlystop.Axis {
	out := make([]earlystop.Axis, 0, len(s.Axes))
	for _, a := range s.Axes {
		out = append(out, a)
	}
	return out
}

// Variant is t as it runs with params instead of its own values of its space: its
// command, environment and the other texts placeholders fill, made from its template. Its
// name, identity and checkpoint stay its own: it is the same trial, run on with other
// values. t itself when it has no space.
func (t *Task) Variant(params []Param) *Task {
	if t.Space == nil {
		return t
	}
	own := ""
	if t.Checkpoint != nil {
		own = t.Checkpoint.Dir
	}
	v := t.Space.variantOf(params, own)
	if v.Checkpoint != nil && t.Checkpoint != nil && v.Checkpoint.Dir != t.Checkpoint.Dir {
		// The checkpoint directory stays the trial's own (runall restores its copy there),
		// also where the command names it through the values that changed: --ckpt ck/<lr>.
		v.keepDir(v.Checkpoint.Dir, t.Checkpoint.Dir)
	}
	v.ID, v.Name, v.Key, v.Group, v.Pos, v.Checkpoint, v.Space = t.ID, t.Name, t.Key, t.Group, t.Pos, t.Checkpoint, t.Space
	for i, s := range v.Steps {
		if i < len(t.Steps) {
			s.ID, s.Name, s.Key, s.Pos = t.Steps[i].ID, t.Steps[i].Name, t.Steps[i].Key, t.Steps[i].Pos
		}
	}
	return v
}

// keepDir names the directory own wherever v's command, environment or working directory
// (and its steps') name it moved.
func (v *Task) keepDir(moved, own string) {
	r := strings.NewReplacer(moved, own)
	v.Cmd, v.Cwd = r.Replace(v.Cmd), r.Replace(v.Cwd)
	for i := range v.Env {
		v.Env[i].Value = r.Replace(v.Env[i].Value)
	}
	for _, s := range v.Steps {
		s.keepDir(moved, own)
	}
}

// filled is a copy of t with r's placeholders replaced in its texts and its steps', as a
// matrix fills its copies: its values are the task file's, or runall's perturbations of its
// numbers, not data from outside (a sampler's go through Instantiate).
func (t *Task) filled(r *strings.Replacer, params []Param) *Task {
	c := *t
	fill(r, c.placeholderTexts())
	c.Params = slices.Concat(t.Params, params)
	c.Steps = nil
	for _, s := range t.Steps {
		c.Steps = append(c.Steps, s.filled(r, params))
	}
	return &c
}

// newSpace is the Space of task rt, with matrix or sample under pbt, whose template (the task
// as written, built as its copies are) is t.
func newSpace(rt *taskfile.Task, t *Task) *Space {
	s := &Space{Template: t}
	for _, a := range rt.Matrix {
		s.Axes = append(s.Axes, Axis{name: a.Name, values: a.Values})
	}
	for _, a := range rt.Sample {
		ax := Axis{name: a.Name, data: true}
		if a.Dist.Kind == "choice" {
			ax.values = a.Dist.Choices
		} else {
			d := a.Dist
			ax.dist = &d
		}
		s.Axes = append(s.Axes, ax)
	}
	return s
}

// variantOf is the template filled with params: a sample key's as data, as the copies were
// (bound), a matrix key's as written; where the command, env or cwd name the checkpoint
// directory through its placeholders, they name own, the trial's (keepDir). Every choice of
// a sample list was checked against the template as the file loaded (spaceError), and a drawn
// or perturbed number goes anywhere; should a value still not go in as data, a number is put
// in as it is and anything else is not put in at all.
func (s *Space) variantOf(params []Param, own string) *Task {
	tmpl := s.Template.filled(strings.NewReplacer(), nil) // a copy of its own
	if tmpl.Checkpoint != nil && own != "" {
		tmpl.keepDir(tmpl.Checkpoint.Dir, own)
	}
	var data []Param
	var pairs []string
	for _, p := range params {
		if slices.ContainsFunc(s.Axes, func(a Axis) bool { return a.data && a.name == p.Name }) {
			data = append(data, p)
			continue
		}
		pairs = append(pairs, "<"+p.Name+">", p.Value)
	}
	if len(data) > 0 {
		b, err := tmpl.instantiate(data, tmpl.Key)
		if err == nil {
			b.Params = tmpl.Params
			tmpl = b
		}
		for _, p := range data {
			if err != nil && plainNumber(p.Value) {
				pairs = append(pairs, "<"+p.Name+">", p.Value)
			}
		}
	}
	v := tmpl.filled(strings.NewReplacer(pairs...), nil)
	v.Params = slices.Concat(s.Template.Params, params)
	return v
}
