package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/runall/runall/runner/taskfile"
)

// The placeholders of for-each, matrix and sample (<name>, as the task file is expanded)
// and of search (as its sampler hands out each trial) are filled in the same texts of a
// task: name, cmd, cwd, url, log-path, metrics, checkpoint, tags, env values and upload from/to. The
// two task types list them below, side by side; fill replaces them in both.

// fill replaces r's placeholders in each text.
func fill(r *strings.Replacer, texts []*string) {
	for _, s := range texts {
		*s = r.Replace(*s)
	}
}

// placeholderTexts points to every text of t a placeholder is filled in. Its tags, env and
// uploads are copied first, so that the pointers reach t's own and not those of the task it
// was copied from.
func writtenPlaceholderTexts(t *taskfile.Task) []*string {
	texts := []*string{&t.Name, &t.Cmd, &t.Cwd, &t.URL, &t.LogPath, &t.Metrics, &t.Checkpoint.Dir}
	t.Tags, t.Env, t.Upload = slices.Clone(t.Tags), slices.Clone(t.Env), slices.Clone(t.Upload)
	for i := range t.Tags {
		texts = append(texts, &t.Tags[i])
	}
	for i := range t.Env {
		texts = append(texts, &t.Env[i].Value)
	}
	for i, u := range t.Upload {
		cu := *u
		t.Upload[i] = &cu
		texts = append(texts, &cu.Transfer.From, &cu.Transfer.To)
	}
	return texts
}

// placeholderTexts is the same texts of a plan task (a search template's).
func (t *Task) placeholderTexts() []*string {
	texts := []*string{&t.Name, &t.Cmd, &t.Cwd, &t.URL, &t.LogPath, &t.Metrics}
	t.Tags, t.Env, t.Upload = slices.Clone(t.Tags), slices.Clone(t.Env), slices.Clone(t.Upload)
	if t.Checkpoint != nil {
		c := *t.Checkpoint
		t.Checkpoint = &c
		texts = append(texts, &c.Dir)
	}
	for i := range t.Tags {
		texts = append(texts, &t.Tags[i])
	}
	for i := range t.Env {
		texts = append(texts, &t.Env[i].Value)
	}
	for i := range t.Upload {
		texts = append(texts, &t.Upload[i].From, &t.Upload[i].To)
	}
	return texts
}

// keyText is a text of a task that takes placeholders, by the key it is written under.
type keyText struct {
	key, text string
}

// valueTexts are t's texts that take placeholders but for its cmd, which the shell reads
// (unfilled), and its name, which defaults to the command (where "<b>" in quotes is text):
// each reaches the trial (env:, cwd:, url:) or names a path or a label of it. A placeholder
// left in one is always a mistake: nothing reads it as anything but the text <name>.
func (t *Task) valueTexts() []keyText {
	out := []keyText{{"url", t.URL}, {"cwd", t.Cwd}, {"log-path", t.LogPath}, {"metrics", t.Metrics}}
	if t.Checkpoint != nil {
		out = append(out, keyText{"checkpoint", t.Checkpoint.Dir})
	}
	for _, tag := range t.Tags {
		out = append(out, keyText{"tags", tag})
	}
	for _, e := range t.Env {
		out = append(out, keyText{"env: " + e.Name, e.Value})
	}
	for _, u := range t.Upload {
		out = append(out, keyText{"upload: from", u.From}, keyText{"upload: to", u.To})
	}
	return out
}

// unfilledTexts lists, for each of t's value texts that holds a placeholder nothing filled,
// the key and the placeholder's name.
func unfilledTexts(t *Task) []keyText {
	var out []keyText
	for _, kt := range t.valueTexts() {
		for _, m := range placeholderRE.FindAllStringSubmatch(kt.text, -1) {
			out = append(out, keyText{kt.key, m[1]})
		}
	}
	return out
}

// unfilledProblems are t's value texts that hold a placeholder nothing filled, each key and
// placeholder once per file (a block's env: reaches every trial of it).
func unfilledProblems(t *Task, seen map[keyText]bool) []Problem {
	var out []Problem
	for _, u := range unfilledTexts(t) {
		if seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, Problem{Pos: t.Pos, Msg: fmt.Sprintf(
			"%s: <%s> is a placeholder that no for-each, matrix or sample fills: the trial would get the text <%s>; fill it (matrix: {%s: [...]}), or take it out",
			u.key, u.text, u.text, u.text)})
	}
	return out
}

// checkUnfilled reports every command that holds a placeholder nothing filled (unfilled),
// and every other text that does (checkUnfilledTexts): the copies of for-each, matrix and
// sample are filled by now; a search: template's trials are filled, and checked, as its
// sampler hands them out (Instantiate).
func (l *loader) checkUnfilled(tasks []*Task, seen map[keyText]bool) {
	for _, t := range tasks {
		if t.Search != nil {
			continue
		}
		for _, name := range unfilledOf(t) {
			l.src.problems = append(l.src.problems, Problem{Pos: t.Pos, Msg: fmt.Sprintf(
				"cmd: <%s> is a placeholder that no for-each, matrix or sample fills: bash would read it as redirections (input from the file %s, output to the next word); fill it (matrix: {%s: [...]}), or quote it if it is text (\"<%s>\")",
				name, name, name, name)})
		}
		if !t.IsBlock() { // what a block sets, its trials inherit, filled by their params
			l.src.problems = append(l.src.problems, unfilledProblems(t, seen)...)
		}
		l.checkUnfilled(t.Parallel, seen)
		l.checkUnfilled(t.Steps, seen)
	}
}

// unfilledOf is unfilled(t.Cmd), less <exec> where url: fills it as the task runs.
func unfilledOf(t *Task) []string {
	out := unfilled(t.Cmd)
	if t.URL != "" {
		out = slices.DeleteFunc(out, func(name string) bool { return name == "exec" })
	}
	return out
}
