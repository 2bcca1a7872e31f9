package plan

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/taskfile"
)

// applyArgs replaces $1..$n and $* in every cmd and name with the command line's extra
// arguments, as bashful does. $10 is replaced before $1 so that it is not read as $1 then 0.
func applyArgs(tasks []*taskfile.Task, args []string) {
	if len(args) == 0 {
		return
	}
	pairs := []string{"$*", strings.Join(args, " ")}
	for i := len(args); i >= 1; i-- {
		pairs = append(pairs, "$"+strconv.Itoa(i), args[i-1])
	}
	r := strings.NewReplacer(pairs...) // at each position the first matching pair wins
	var walk func([]*taskfile.Task)
	walk = func(ts []*taskfile.Task) {
		for _, t := range ts {
			t.Cmd, t.Name = r.Replace(t.Cmd), r.Replace(t.Name)
			walk(t.Parallel)
			walk(t.Steps)
		}
	}
	walk(tasks)
}

// copies expands for-each and matrix. Names are settled here, before substitution, so that
// an unnamed task is named by its substituted command. in is what t inherits, which a
// sample: value may reach a path through (bound).
func (l *loader) copies(t *taskfile.Task, in inherited) []*taskfile.Task {
	name := l.defaultName(t)
	template := name + "\x00" + commandTemplate(t)
	switch {
	case len(t.ForEach) > 0:
		var out []*taskfile.Task
		param := strings.Trim(l.cfg.ReplicaReplacePattern, "<>")
		for _, item := range t.ForEach {
			c := substituted(t, strings.NewReplacer(l.cfg.ReplicaReplacePattern, item))
			c.Name = strings.ReplaceAll(name, l.cfg.ReplicaReplacePattern, item)
			c.Params = []Param{{Name: param, Value: item}}
			c.Template = template
			out = append(out, c)
		}
		return out
	case len(t.Matrix) > 0 || len(t.Sample) > 0:
		out, err := rowCopies(t, name, template, in)
		if err != nil {
			l.src.problemAt(t, "sample", "sample: "+err.Error())
		}
		return out
	}
	c := *t
	c.Name = name
	c.Template = template
	return []*taskfile.Task{&c}
}

// rowCopies expands matrix and sample: a copy per row of values; those made before a sample
// value that cannot be handed over, and why. A matrix value is the
// task file's own and is pasted where its placeholder stands; a sample value is data, as a
// sampler's is (bound).
func rowCopies(t *taskfile.Task, name, template string, in inherited) ([]*taskfile.Task, error) {
	names := make([]string, 0, len(t.Matrix)+len(t.Sample))
	for _, a := range t.Matrix {
		names = append(names, a.Name)
	}
	for _, a := range t.Sample {
		names = append(names, a.Name)
	}
	named := false
	for _, n := range names {
		named = named || strings.Contains(name, "<"+n+">")
	}
	var out []*taskfile.Task
	for _, combo := range paramRows(t) {
		var pairs, labels []string
		var params []Param
		for i, n := range names {
			pairs = append(pairs, "<"+n+">", combo[i])
			labels = append(labels, n+"="+combo[i])
			params = append(params, Param{Name: n, Value: combo[i]})
		}
		c := substituted(t, strings.NewReplacer(pairs[:2*len(t.Matrix)]...))
		if err := bound(c, params[len(t.Matrix):], in); err != nil {
			return out, err
		}
		c.Name = strings.NewReplacer(pairs...).Replace(name)
		c.Params, c.Data, c.Template = params, len(t.Sample), template
		if !named {
			c.Name += " [" + strings.Join(labels, " ") + "]"
		}
		out = append(out, c)
	}
	return out, nil
}

// commandTemplate is what a task runs, as written: its cmd (or url), else its steps'.
func commandTemplate(t *taskfile.Task) string {
	if t.Cmd != "" || t.URL != "" {
		return t.Cmd + "\x00" + t.URL
	}
	parts := make([]string, 0, len(t.Steps)+len(t.Parallel))
	for _, s := range slices.Concat(t.Steps, t.Parallel) {
		parts = append(parts, s.Name+"\x00"+commandTemplate(s))
	}
	return strings.Join(parts, "\x00")
}

// paramRows are the values of a task's copies: each matrix combination with each sampled
// point, matrix keys first.
func paramRows(t *taskfile.Task) [][]string {
	combos := combinations(t.Matrix)
	if len(t.Sample) == 0 {
		return combos
	}
	var out [][]string
	points := samplePoints(t.Sample, t.Trials, t.Seed)
	for _, c := range combos {
		for _, p := range points {
			out = append(out, slices.Concat(c, p))
		}
	}
	return out
}

// combinations is the cartesian product of the matrix, the first key varying slowest.
func combinations(axes []taskfile.MatrixAxis) [][]string {
	combos := [][]string{nil}
	for _, a := range axes {
		var next [][]string
		for _, c := range combos {
			for _, v := range a.Values {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	return combos
}

// defaultName is name:, else the command, else the script's file name, else the steps'.
func (l *loader) defaultName(t *taskfile.Task) string {
	switch {
	case t.Name != "":
		return t.Name
	case t.Cmd != "" && t.URL != "":
		return strings.ReplaceAll(t.Cmd, l.execPattern, urlBase(t.URL))
	case t.Cmd != "":
		return strings.TrimRight(t.Cmd, "\n")
	case t.URL != "":
		return urlBase(t.URL)
	case len(t.Steps) > 0:
		var names []string
		for _, s := range t.Steps {
			names = append(names, l.defaultName(s))
		}
		return strings.Join(names, " && ")
	}
	return "parallel tasks"
}

func urlBase(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Path != "" {
		return path.Base(u.Path)
	}
	return path.Base(raw)
}

// substituted is a deep copy of t, its children and steps, with placeholders replaced in the
// fields a for-each or matrix value may appear in. for-each and matrix themselves are dropped
// from the copy (they have been expanded), but kept on the children, which expand later.
func substituted(t *taskfile.Task, r *strings.Replacer) *taskfile.Task {
	c := substitutedFields(t, r)
	c.ForEach, c.Matrix, c.Sample = nil, nil, nil
	return c
}

func substitutedFields(t *taskfile.Task, r *strings.Replacer) *taskfile.Task {
	c := *t
	fill(r, writtenPlaceholderTexts(&c))
	c.Parallel, c.Steps = nil, nil
	for _, p := range t.Parallel {
		c.Parallel = append(c.Parallel, substitutedFields(p, r))
	}
	for _, s := range t.Steps {
		c.Steps = append(c.Steps, substitutedFields(s, r))
	}
	return &c
}
