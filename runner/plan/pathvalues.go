package plan

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/runall/runall/internal/pathname"
	"github.com/runall/runall/runner/taskfile"
)

// A value from outside the task file (a sampler's, search:; a sample: draw) that a
// placeholder puts into a path names one directory or file where the placeholder stands,
// and nothing else: checkpoint: ck/<lr> with lr "../victim" would have runall empty a
// sibling of ck, log-path: logs/<lr> with "../../x/important.txt" append to that file. The
// part of the path that holds a placeholder must, filled, stay one plain name (pathname.WhyNotPlain:
// not empty, . or .., no / or \, no control character such as NUL or a line break, no $ that
// the path's ${VAR} expansion would read). As in an arithmetic context (bind.go), such a
// value is refused there.

// pathTexts are t's texts that name a path (its steps' are theirs): where runall empties,
// restores, appends to, reads, runs in or uploads from, and where it uploads to.
func (t *Task) pathTexts() []keyText {
	out := []keyText{{"log-path", t.LogPath}, {"cwd", t.Cwd}, {"metrics", t.Metrics}}
	if t.Checkpoint != nil {
		out = append(out, keyText{"checkpoint", t.Checkpoint.Dir})
	}
	for _, u := range t.Upload {
		out = append(out, keyText{"upload: from", u.From}, keyText{"upload: to", u.To})
	}
	return out
}

// writtenPathTexts are the same texts of a task as written, its cwd: and metrics: its
// parent's (in) where it sets none, as the plan task takes them.
func writtenPathTexts(t *taskfile.Task, in inherited) []keyText {
	out := []keyText{{"log-path", t.LogPath}, {"cwd", cmp.Or(t.Cwd, in.cwd)}, {"metrics", cmp.Or(t.Metrics, in.metrics)}, {"checkpoint", t.Checkpoint.Dir}}
	for _, u := range t.Upload {
		out = append(out, keyText{"upload: from", u.Transfer.From}, keyText{"upload: to", u.Transfer.To})
	}
	return out
}

// checkPathValues refuses params whose values would take a path of t or of its steps out of
// where its placeholder stands.
func (t *Task) checkPathValues(params []Param) error {
	var bad error
	Walk([]*Task{t}, func(s *Task) {
		if bad == nil {
			bad = checkPathValues(s.pathTexts(), s.Env, params)
		}
	})
	return bad
}

// checkPathValues refuses params whose values would take a path of texts out of where its
// placeholder stands, a placeholder that reaches a text through env (the task's env:, a
// ${VAR} of it in the path) included: the value stands there all the same.
func checkPathValues(texts []keyText, env []EnvVar, params []Param) error {
	for _, pt := range texts {
		text := throughEnv(pt.text, env)
		if err := checkPathValue(text, params); err != nil {
			if text != pt.text {
				return fmt.Errorf("%s: %s (%s with env: put in): %w", pt.key, pt.text, text, err)
			}
			return fmt.Errorf("%s: %s: %w", pt.key, pt.text, err)
		}
	}
	return nil
}

// throughEnv is text with each ${VAR} of env (a task's env:, in order) replaced by that
// variable's value as written, itself with the variables of env before it put in, as the
// run expands them (taskVars): env: {A: "<lr>", B: "x${A}"} makes ck/${B} ck/x<lr>. Other
// variables are kept as written.
func throughEnv(text string, env []EnvVar) string {
	if len(env) == 0 || !strings.Contains(text, "$") {
		return text
	}
	return envPutIn(text, ownVars(env, nil))
}

// ownVars are the variables a task sets itself, as written: its params' (ParamVar), then its
// env: in order, each value with those before it put in (envPutIn).
func ownVars(env []EnvVar, params []Param) map[string]string {
	values := map[string]string{}
	for _, p := range params {
		values[ParamVar(p.Name)] = p.Value
	}
	for _, e := range env {
		values[e.Name] = envPutIn(e.Value, values)
	}
	return values
}

// envPutIn is s with the variables of values replaced by their values, each as Expand
// reads it (${VAR:-default} the default where the value is empty); others kept.
func envPutIn(s string, values map[string]string) string {
	return expandWith(s, func(name, def string, hasDef bool) string {
		v, ok := values[name]
		switch {
		case ok && v != "":
			return v
		case ok && hasDef:
			return def
		case ok:
			return ""
		case hasDef:
			return "${" + name + ":-" + def + "}"
		}
		return "${" + name + "}"
	})
}

// checkPathValue checks each part of text between slashes that holds a placeholder of
// params, filled with their values.
func checkPathValue(text string, params []Param) error {
	if strings.Contains(text, "$RUNALL_PARAM_") || strings.Contains(text, "${RUNALL_PARAM_") {
		text = refsAsPlaceholders(text, params)
	}
	if !strings.Contains(text, "<") {
		return nil
	}
	for _, part := range strings.Split(text, "/") {
		var pairs []string
		var in []Param
		for _, p := range params {
			if strings.Contains(part, "<"+p.Name+">") {
				pairs = append(pairs, "<"+p.Name+">", p.Value)
				in = append(in, p)
			}
		}
		if len(in) == 0 {
			continue
		}
		if why := pathname.WhyNotPlain(strings.NewReplacer(pairs...).Replace(part)); why != "" {
			return fmt.Errorf("param %s = %q makes %s where its placeholder stands, and the path would leave that place: "+
				"a value put into a path must be one plain name (have the sampler hand out such values, or pass the value to the command alone)",
				in[0].Name, in[0].Value, why)
		}
	}
	return nil
}

// refsAsPlaceholders is text with each reference to a param's variable, which the path's
// ${VAR} expansion fills with the value ($RUNALL_PARAM_lr, ${RUNALL_PARAM_lr}), written as
// its placeholder: the value stands there all the same.
func refsAsPlaceholders(text string, params []Param) string {
	for _, p := range params {
		v := ParamVar(p.Name)
		text = strings.ReplaceAll(text, "${"+v+"}", "<"+p.Name+">")
		var b strings.Builder
		for {
			i := strings.Index(text, "$"+v)
			if i < 0 {
				break
			}
			end := i + 1 + len(v)
			b.WriteString(text[:i])
			if end < len(text) && isVarByte(text[end], false) {
				b.WriteString(text[i:end]) // a longer name: another variable
			} else {
				b.WriteString("<" + p.Name + ">")
			}
			text = text[end:]
		}
		text = b.String() + text
	}
	return text
}
