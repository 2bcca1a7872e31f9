package plan

import (
	"cmp"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/runall/runall/runner/earlystop"
)

// applyArgs replaces $1..$n and $* in every cmd and name with the command line's extra
// arguments, as bashful does. $10 is replaced before $1 so that it is not read as $1 then 0.
func applyArgs(tasks []*rawTask, args []string) {
	if len(args) == 0 {
		return
	}
	pairs := []string{"$*", strings.Join(args, " ")}
	for i := len(args); i >= 1; i-- {
		pairs = append(pairs, "$"+strconv.Itoa(i), args[i-1])
	}
	r := strings.NewReplacer(pairs...) // at each position the first matching pair wins
	var walk func([]*rawTask)
	walk = func(ts []*rawTask) {
		for _, t := range ts {
			t.cmd, t.name = r.Replace(t.cmd), r.Replace(t.name)
			walk(t.parallel)
			walk(t.steps)
		}
	}
	walk(tasks)
}

// expandTasks builds plan tasks from raw ones: one copy per for-each item or matrix
// combination, each with its parent's inherited settings applied.
func (l *loader) expandTasks(list []*rawTask, in inherited, level int) []*Task {
	var out []*Task
	var named map[*rawTask]flagTrial
	if level == levelTrial {
		named = flagNames(list)
	}
	for _, rt := range list {
		copies := l.copies(rt)
		l.src.checkIdentical(rt, copies, l.cfg.ReplicaReplacePattern)
		var space *Space
		if level == levelTrial && in.earlyStop != nil && in.earlyStop.Method == earlystop.PBT && (len(rt.matrix) > 0 || len(rt.sample) > 0) {
			tmpl := *rt // the task as written: the template pbt's variants are filled from
			tmpl.matrix, tmpl.sample, tmpl.name = nil, nil, l.defaultName(rt)
			seen := len(l.src.problems)
			t := l.task(&tmpl, in, level)
			l.src.problems = l.src.problems[:seen] // what the template would report, its copies report
			space = newSpace(rt, t)
			if err := spaceError(space); err != nil {
				l.src.problemAt(rt, "sample", "sample: "+err.Error())
			}
		}
		for i, c := range copies {
			if ft, ok := named[rt]; ok {
				c.params = ft.params
				c.name = cmp.Or(ft.name, c.name)
			}
			l.src.checkName(c)
			t := l.task(c, in, level)
			t.Space = space
			out = append(out, t)
			copies[i] = nil // built: the raw copy may go, so that the copies and the tasks are not all held at once
		}
	}
	return out
}

// copies expands for-each and matrix. Names are settled here, before substitution, so that
// an unnamed task is named by its substituted command.
func (l *loader) copies(t *rawTask) []*rawTask {
	name := l.defaultName(t)
	template := name + "\x00" + commandTemplate(t)
	switch {
	case len(t.forEach) > 0:
		var out []*rawTask
		param := strings.Trim(l.cfg.ReplicaReplacePattern, "<>")
		for _, item := range t.forEach {
			c := t.substituted(strings.NewReplacer(l.cfg.ReplicaReplacePattern, item))
			c.name = strings.ReplaceAll(name, l.cfg.ReplicaReplacePattern, item)
			c.params = []Param{{param, item}}
			c.template = template
			out = append(out, c)
		}
		return out
	case len(t.matrix) > 0 || len(t.sample) > 0:
		out, err := rowCopies(t, name, template)
		if err != nil {
			l.src.problemAt(t, "sample", "sample: "+err.Error())
		}
		return out
	}
	c := *t
	c.name = name
	c.template = template
	return []*rawTask{&c}
}

// rowCopies expands matrix and sample: a copy per row of values; those made before a sample
// value that cannot be handed over, and why. A matrix value is the
// task file's own and is pasted where its placeholder stands; a sample value is data, as a
// sampler's is (bound).
func rowCopies(t *rawTask, name, template string) ([]*rawTask, error) {
	names := make([]string, 0, len(t.matrix)+len(t.sample))
	for _, a := range t.matrix {
		names = append(names, a.name)
	}
	for _, a := range t.sample {
		names = append(names, a.name)
	}
	named := false
	for _, n := range names {
		named = named || strings.Contains(name, "<"+n+">")
	}
	var out []*rawTask
	for _, combo := range paramRows(t) {
		var pairs, labels []string
		var params []Param
		for i, n := range names {
			pairs = append(pairs, "<"+n+">", combo[i])
			labels = append(labels, n+"="+combo[i])
			params = append(params, Param{n, combo[i]})
		}
		c := t.substituted(strings.NewReplacer(pairs[:2*len(t.matrix)]...))
		if err := c.bound(params[len(t.matrix):]); err != nil {
			return out, err
		}
		c.name = strings.NewReplacer(pairs...).Replace(name)
		c.params, c.data, c.template = params, len(t.sample), template
		if !named {
			c.name += " [" + strings.Join(labels, " ") + "]"
		}
		out = append(out, c)
	}
	return out, nil
}

// commandTemplate is what a task runs, as written: its cmd (or url), else its steps'.
func commandTemplate(t *rawTask) string {
	if t.cmd != "" || t.url != "" {
		return t.cmd + "\x00" + t.url
	}
	parts := make([]string, 0, len(t.steps)+len(t.parallel))
	for _, s := range slices.Concat(t.steps, t.parallel) {
		parts = append(parts, s.name+"\x00"+commandTemplate(s))
	}
	return strings.Join(parts, "\x00")
}

// paramRows are the values of a task's copies: each matrix combination with each sampled
// point, matrix keys first.
func paramRows(t *rawTask) [][]string {
	combos := combinations(t.matrix)
	if len(t.sample) == 0 {
		return combos
	}
	var out [][]string
	points := samplePoints(t.sample, t.trials, t.seed)
	for _, c := range combos {
		for _, p := range points {
			out = append(out, slices.Concat(c, p))
		}
	}
	return out
}

// combinations is the cartesian product of the matrix, the first key varying slowest.
func combinations(axes []matrixAxis) [][]string {
	combos := [][]string{nil}
	for _, a := range axes {
		var next [][]string
		for _, c := range combos {
			for _, v := range a.values {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	return combos
}

// defaultName is name:, else the command, else the script's file name, else the steps'.
func (l *loader) defaultName(t *rawTask) string {
	switch {
	case t.name != "":
		return t.name
	case t.cmd != "" && t.url != "":
		return strings.ReplaceAll(t.cmd, l.execPattern, urlBase(t.url))
	case t.cmd != "":
		return strings.TrimRight(t.cmd, "\n")
	case t.url != "":
		return urlBase(t.url)
	case len(t.steps) > 0:
		var names []string
		for _, s := range t.steps {
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
func (t *rawTask) substituted(r *strings.Replacer) *rawTask {
	c := t.substitutedFields(r)
	c.forEach, c.matrix, c.sample = nil, nil, nil
	return c
}

func (t *rawTask) substitutedFields(r *strings.Replacer) *rawTask {
	c := *t
	fill(r, c.placeholderTexts())
	c.parallel, c.steps = nil, nil
	for _, p := range t.parallel {
		c.parallel = append(c.parallel, p.substitutedFields(r))
	}
	for _, s := range t.steps {
		c.steps = append(c.steps, s.substitutedFields(r))
	}
	return &c
}
