package plan

import (
	"slices"
	"strings"

	"github.com/runall/runall/runner/taskfile"
)

// Unnamed trials written out one by one (two cmd: lines that differ in --lr 0.01 and
// --lr 0.1) are named by what tells them apart: the --flag value and --flag=value pairs in
// which their commands differ, which are also their params. A summary of two identical
// truncated commands says nothing; "lr=0.01 batch_size=128" says what the trial was.

// Named trials written out one by one (name: lr=0.03 width=128, cmd: ... --lr 0.03
// --width 128) keep their names, and get the same params, so that the report can plot their
// metrics against them: the flags in which their commands differ or, when none does, the
// k=v words of their names.

// flagTrial is what a block's trial written out one by one is named by (name; "" keeps
// its name) and what its params are.
type flagTrial struct {
	name   string
	params []Param
}

// flagNames names the unnamed trials of a block by the flags in which their commands
// differ, and gives its named trials params. Copies (for-each, matrix, sample, search),
// scripts and trials of steps keep theirs; so do all when fewer than two of a kind are
// left or nothing tells them apart.
func flagNames(list []*taskfile.Task) map[*taskfile.Task]flagTrial {
	var unnamed, named []*taskfile.Task
	for _, t := range list {
		if t.Cmd == "" || t.URL != "" || len(t.Steps) > 0 || len(t.ForEach) > 0 ||
			len(t.Matrix) > 0 || len(t.Sample) > 0 || t.Search != nil {
			continue
		}
		if t.Name == "" {
			unnamed = append(unnamed, t)
		} else {
			named = append(named, t)
		}
	}
	out := map[*taskfile.Task]flagTrial{}
	nameByFlags(unnamed, out)
	paramsOfNamed(named, out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// nameByFlags names unnamed trials by the flags in which their commands differ.
func nameByFlags(cands []*taskfile.Task, out map[*taskfile.Task]flagTrial) {
	if len(cands) < 2 {
		return
	}
	values, differ := differingFlags(cands)
	if len(differ) == 0 {
		return
	}
	names := map[string]bool{}
	for i, t := range cands {
		ft := flagTrial{params: flagParams(values[i], differ)}
		var labels []string
		for _, p := range ft.params {
			labels = append(labels, p.Name+"="+p.Value)
		}
		ft.name = strings.Join(labels, " ")
		if ft.name == "" || names[ft.name] {
			ft.name = "" // not told apart by flags alone: named by the command, as before
		}
		names[ft.name] = true
		out[t] = ft
	}
}

// paramsOfNamed gives named trials the flags in which their commands differ as params or,
// when none does, the k=v words of their names.
func paramsOfNamed(cands []*taskfile.Task, out map[*taskfile.Task]flagTrial) {
	if len(cands) < 2 {
		return
	}
	if values, differ := differingFlags(cands); len(differ) > 0 {
		for i, t := range cands {
			out[t] = flagTrial{params: flagParams(values[i], differ)}
		}
		return
	}
	for _, t := range cands {
		if params := nameParams(t.Name); len(params) > 0 {
			out[t] = flagTrial{params: params}
		}
	}
}

// differingFlags reads each command's flags (values[i] by flag name) and lists the flags in
// which they differ, in the order first seen.
func differingFlags(cands []*taskfile.Task) (values []map[string]string, differ []string) {
	var order []string
	values = make([]map[string]string, len(cands))
	for i, t := range cands {
		values[i] = map[string]string{}
		for _, f := range commandFlags(t.Cmd) {
			if _, seen := values[i][f.Name]; seen {
				continue // a flag given twice: the first names it
			}
			values[i][f.Name] = f.Value
			if !slices.Contains(order, f.Name) {
				order = append(order, f.Name)
			}
		}
	}
	for _, flag := range order {
		first, had := values[0][flag]
		for _, v := range values[1:] {
			if got, has := v[flag]; has != had || got != first {
				differ = append(differ, flag)
				break
			}
		}
	}
	return values, differ
}

// flagParams are a command's values of the flags that differ, as params.
func flagParams(values map[string]string, differ []string) []Param {
	var params []Param
	for _, flag := range differ {
		if v, ok := values[flag]; ok {
			params = append(params, Param{Name: flag, Value: v})
		}
	}
	return params
}

// nameParams are the k=v words of a trial's name ("lr=0.03 width=128,"), in order.
func nameParams(name string) []Param {
	var params []Param
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == ';' }) {
		k, v, ok := strings.Cut(w, "=")
		if ok && v != "" && isFlagName(k) && !slices.ContainsFunc(params, func(p Param) bool { return p.Name == k }) {
			params = append(params, Param{Name: k, Value: v})
		}
	}
	return params
}

// commandFlags are the --flag value and --flag=value pairs of a command line, in order; a
// flag followed by another flag (or nothing) is a switch, "true".
func commandFlags(cmd string) []Param {
	words := shellWords(cmd)
	var out []Param
	for i := 0; i < len(words); i++ {
		w, ok := strings.CutPrefix(words[i], "--")
		if !ok || w == "" || !isFlagName(w) {
			continue
		}
		if name, v, eq := strings.Cut(w, "="); eq {
			if isFlagName(name) {
				out = append(out, Param{Name: name, Value: v})
			}
			continue
		}
		if i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") && !isShellOperator(words[i+1]) {
			out = append(out, Param{Name: w, Value: words[i+1]})
			i++
			continue
		}
		out = append(out, Param{Name: w, Value: "true"})
	}
	return out
}

func isFlagName(s string) bool {
	name, _, _ := strings.Cut(s, "=")
	if name == "" || !(name[0] >= 'A' && name[0] <= 'Z' || name[0] >= 'a' && name[0] <= 'z') {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func isShellOperator(w string) bool {
	switch w {
	case "|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1":
		return true
	}
	return false
}

// shellWords splits a command line into words as a shell would for plain words, quotes and
// backslashes; it expands nothing. Operators stand as words of their own when spaced.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, c := range s {
		switch {
		case escaped:
			b.WriteRune(c)
			escaped = false
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'':
			b.WriteRune(c)
		case c == '\\':
			escaped, inWord = true, true
		case quote == '"':
			b.WriteRune(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out
}
