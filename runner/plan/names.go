package plan

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/runall/runall/runner/taskfile"
	"gopkg.in/yaml.v3"
)

// Names and commands are checked when the file is loaded, the same for `runall check` and
// `runall run`: a name is printed to terminals, logs and results, and a NUL cannot reach a
// process at all, so a file that holds either would pass check and fail (or draw on the
// terminal) at run.

// checkNUL reports every scalar under n that holds a NUL: no command, name, path or
// variable can carry one to a process.
func checkNUL(d *taskfile.Decoder, n *yaml.Node) {
	seen := map[*yaml.Node]bool{}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		if n.Kind == yaml.ScalarNode && strings.ContainsRune(n.Value, 0) {
			d.Errorf(n, "%s holds a NUL character, which no command, name, path or variable can carry: remove it", quoteShort(n.Value))
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
}

// checkArgs refuses command-line arguments that cannot be substituted into a command.
func (src *sources) checkArgs(args []string) {
	for i, a := range args {
		if strings.ContainsRune(a, 0) {
			src.problems = append(src.problems, Problem{Pos: Pos{File: src.path}, Msg: fmt.Sprintf("argument $%d holds a NUL character: remove it", i+1)})
		}
	}
}

// checkName refuses a name: that holds a control character (an escape sequence would clear
// or recolour the terminal that check, the live view or the summary prints it on). c is an
// expanded copy: its name has the for-each or matrix values and the arguments in it.
func (src *sources) checkName(c *taskfile.Task) {
	at, explicit := c.Keys["name"]
	if !explicit {
		return // named by its command, which output shows with control characters removed
	}
	for _, r := range c.Name {
		if unicode.IsControl(r) {
			src.problems = append(src.problems, Problem{Pos: src.pos(at), Msg: fmt.Sprintf(
				"name: %s holds the control character %U, which would act on the terminal it is printed to: remove it (from the name, or the value or argument put into it)",
				quoteShort(c.Name), r)})
			return
		}
	}
}

// quoteShort quotes s with its control characters escaped, shortened to 60 characters.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return fmt.Sprintf("%+q", s)
}

// checkIdentical refuses for-each and matrix copies that would be the same task: the same
// name, and the same texts wherever a placeholder is filled (command, env, cwd, ...: a param
// reaches a task through those alone). They would run the same thing twice and be told apart
// nowhere. Copies that differ only where their names do not show it are named apart
// (distinctNames).
func (src *sources) checkIdentical(t *taskfile.Task, copies []*taskfile.Task, forEachPlaceholder string) {
	if len(copies) < 2 {
		return
	}
	key, placeholder := "for-each", forEachPlaceholder
	switch {
	case len(t.Matrix) > 0:
		key, placeholder = "matrix", "<"+t.Matrix[0].Name+">"
	case len(t.Sample) > 0:
		key, placeholder = "sample", "<"+t.Sample[0].Name+">"
	}
	first := map[string]int{}
	dupA, dupB := -1, -1
	for i, c := range copies {
		id := filledTexts(c)
		if j, dup := first[id]; !dup {
			first[id] = i
		} else if dupA < 0 {
			dupA, dupB = j, i
		}
	}
	if dupA < 0 {
		return
	}
	a, b := paramText(copies[dupA].Params), paramText(copies[dupB].Params)
	what := fmt.Sprintf("the copies for %s and %s", a, b)
	switch {
	case a == b:
		what = fmt.Sprintf("%s is listed twice, so its copies", a)
	case len(first) == 1:
		what = "every copy"
	}
	src.problemAt(t, key, fmt.Sprintf(
		"%s: %s would be the same task (name %s, and the same command, env and paths): put %s in name: or cmd: so that each copy differs, or list each value once",
		key, what, quoteShort(copies[dupB].Name), placeholder))
}

// filledTexts joins every text of c a placeholder is filled in, its steps' and trials' too.
func filledTexts(c *taskfile.Task) string {
	cc := *c // placeholderTexts clones c's lists: c's own stay as they are
	var b strings.Builder
	for _, s := range writtenPlaceholderTexts(&cc) {
		b.WriteString(*s)
		b.WriteByte(0)
	}
	for _, s := range slices.Concat(c.Steps, c.Parallel) {
		b.WriteString(filledTexts(s))
		b.WriteByte(1)
	}
	return b.String()
}

func paramText(ps []Param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + p.Value
	}
	return strings.Join(parts, " ")
}

// distinctNames names apart the copies of one task (for-each, matrix, sample) that would share
// a name because a param that differs is not in it (<lr> in the name, <seed> only in env):
// each gets the params that differ among them, as matrix names a copy whose name has no
// placeholder ("lr=0.1 [seed=2]"). The summary, the logs and the results show trials by
// name; a trial is identified by its ID, but a reader needs the names apart too.
func distinctNames(tasks []*Task) {
	type copyName struct {
		pos  Pos
		name string
	}
	groups := map[copyName][]*Task{}
	for _, t := range tasks {
		k := copyName{t.Pos, t.Name}
		groups[k] = append(groups[k], t)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, t := range g {
			if labels := differingParams(g, t); labels != "" {
				t.Name += " [" + labels + "]"
			}
		}
	}
	for _, t := range tasks {
		distinctNames(t.Parallel)
		distinctNames(t.Steps)
	}
}

// differingParams is t's params whose values are not the same across its group, as labels.
func differingParams(group []*Task, t *Task) string {
	var labels []string
	for i, p := range t.Params {
		for _, o := range group {
			if i < len(o.Params) && o.Params[i].Value != p.Value {
				labels = append(labels, p.Name+"="+p.Value)
				break
			}
		}
	}
	return strings.Join(labels, " ")
}

// maxNameWarnings bounds the duplicate-name warnings: a file may have thousands.
const maxNameWarnings = 10

// duplicateNames warns of tasks written at two places that share a name path: results, logs
// and the summary show them by name, so one could not be told from the other. (Copies of one
// task are named apart: distinctNames.)
func duplicateNames(tasks []*Task) []Problem {
	first := map[string]Pos{}
	var out []Problem
	more := 0
	var walk func(ts []*Task, parent string)
	walk = func(ts []*Task, parent string) {
		for _, t := range ts {
			path := joinPath(parent, t.Name)
			if at, dup := first[path]; !dup {
				first[path] = t.Pos
			} else if len(out) >= maxNameWarnings {
				more++
			} else {
				out = append(out, Problem{Pos: t.Pos, Msg: fmt.Sprintf("the name %s is also used at %s: results, logs and the summary will not tell the two apart; rename one", quoteShort(t.Name), at)})
			}
			walk(t.Parallel, path)
			walk(t.Steps, path)
		}
	}
	walk(tasks, "")
	if more > 0 {
		out = append(out, Problem{Pos: out[len(out)-1].Pos, Msg: fmt.Sprintf("and %d more tasks whose names are used twice", more)})
	}
	return out
}
