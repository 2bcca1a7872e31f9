package plan

import (
	"slices"
	"strings"
)

// Unnamed trials written out one by one (two cmd: lines that differ in --lr 0.01 and
// --lr 0.1) are named by what tells them apart: the --flag value and --flag=value pairs in
// which their commands differ, which are also their params. A summary of two identical
// truncated commands says nothing; "lr=0.01 batch_size=128" says what the trial was.

// flagTrial is what a block's unnamed trial is named by.
type flagTrial struct {
	name   string
	params []Param
}

// flagNames names the unnamed trials of a block by the flags in which their commands
// differ. Trials with a name, copies (for-each, matrix, sample, search), scripts and trials
// of steps keep theirs; so do all when fewer than two are left or no flag differs.
func flagNames(list []*rawTask) map[*rawTask]flagTrial {
	var cands []*rawTask
	for _, t := range list {
		if t.name == "" && t.cmd != "" && t.url == "" && len(t.steps) == 0 && len(t.forEach) == 0 &&
			len(t.matrix) == 0 && len(t.sample) == 0 && t.search == nil {
			cands = append(cands, t)
		}
	}
	if len(cands) < 2 {
		return nil
	}
	var order []string
	values := make([]map[string]string, len(cands))
	for i, t := range cands {
		values[i] = map[string]string{}
		for _, f := range commandFlags(t.cmd) {
			if _, seen := values[i][f.Name]; seen {
				continue // a flag given twice: the first names it
			}
			values[i][f.Name] = f.Value
			if !slices.Contains(order, f.Name) {
				order = append(order, f.Name)
			}
		}
	}
	var differ []string
	for _, flag := range order {
		first, had := values[0][flag]
		for _, v := range values[1:] {
			if got, has := v[flag]; has != had || got != first {
				differ = append(differ, flag)
				break
			}
		}
	}
	if len(differ) == 0 {
		return nil
	}
	out := map[*rawTask]flagTrial{}
	names := map[string]bool{}
	for i, t := range cands {
		var ft flagTrial
		var labels []string
		for _, flag := range differ {
			if v, ok := values[i][flag]; ok {
				ft.params = append(ft.params, Param{flag, v})
				labels = append(labels, flag+"="+v)
			}
		}
		ft.name = strings.Join(labels, " ")
		if ft.name == "" || names[ft.name] {
			ft.name = "" // not told apart by flags alone: named by the command, as before
		}
		names[ft.name] = true
		out[t] = ft
	}
	return out
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
				out = append(out, Param{name, v})
			}
			continue
		}
		if i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") && !isShellOperator(words[i+1]) {
			out = append(out, Param{w, words[i+1]})
			i++
			continue
		}
		out = append(out, Param{w, "true"})
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
