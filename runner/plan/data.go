package plan

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/runall/runall/runner/taskfile"
)

// bound puts params, values that are data (sample:'s draws), into t, its trials and its
// steps as Instantiate puts a sampler's: each command refers to their variables
// (bindCommand), the texts expanded against the environment (cwd, url, metrics, env,
// upload) hold ${references} to them, and the others (name, tags, log-path, checkpoint)
// the values, refused where they would take a path out of its place (pathvalues.go), through
// env: too, its parent's (in) included. t is a copy of its own (substituted).
func bound(t *taskfile.Task, params []Param, in inherited) error {
	if len(params) == 0 {
		return nil
	}
	env := mergeEnv(in.env, t.Env)
	if err := checkPathValues(writtenPathTexts(t, in), env, params); err != nil {
		return err
	}
	own := inherited{env: env, cwd: cmp.Or(t.Cwd, in.cwd), metrics: cmp.Or(t.Metrics, in.metrics)}
	cmd, err := bindCommand(t.Cmd, params)
	if err != nil {
		return err
	}
	var values, refs []string
	for _, p := range params {
		values = append(values, "<"+p.Name+">", p.Value)
		refs = append(refs, "<"+p.Name+">", "${"+ParamVar(p.Name)+"}")
	}
	expanded := []*string{&t.Cwd, &t.URL, &t.Metrics}
	for i := range t.Env {
		expanded = append(expanded, &t.Env[i].Value)
	}
	for _, u := range t.Upload {
		expanded = append(expanded, &u.Transfer.From, &u.Transfer.To)
	}
	fill(strings.NewReplacer(refs...), expanded)
	t.Cmd = cmd
	fill(strings.NewReplacer(values...), writtenPlaceholderTexts(t))
	for _, c := range t.Parallel {
		if err := bound(c, params, own); err != nil {
			return err
		}
	}
	for _, s := range t.Steps {
		if err := bound(s, params, own); err != nil {
			return err
		}
	}
	return nil
}

// ShownCmd is t's command as check shows it: a param handed over as data ("${RUNALL_PARAM_lr}")
// written as the word it is, its value, quoted where the shell would read it otherwise.
func (t *Task) ShownCmd() string {
	if !strings.Contains(t.Cmd, "${RUNALL_PARAM_") {
		return t.Cmd
	}
	var pairs []string
	for _, p := range t.Params {
		ref := "${" + ParamVar(p.Name) + "}"
		pairs = append(pairs, `"`+ref+`"`, shownWord(p.Value), ref, p.Value)
	}
	return strings.NewReplacer(pairs...).Replace(t.Cmd)
}

// shownWord is s as one word of a command: as it is when the shell reads it so, else quoted.
func shownWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:+=@%/-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// spaceError refuses a sample list's choice that pbt could explore into but that the
// template cannot take as data (a word in an arithmetic expression, a path it would move).
func spaceError(s *Space) error {
	for _, a := range s.Axes {
		if !a.data {
			continue
		}
		inDir := s.Template.Checkpoint != nil && strings.Contains(s.Template.Checkpoint.Dir, "<"+a.name+">")
		for _, v := range a.values {
			p := []Param{{Name: a.name, Value: v}}
			_, err := s.Template.instantiate(p, "")
			if err == nil {
				err = s.Template.checkPathValues(p)
			}
			if err == nil && inDir && shownWord(v) != v {
				// Variants name the trial's own directory in its command as text (keepDir).
				err = fmt.Errorf("pbt names each trial's own checkpoint directory in its command as text: a choice of %s, which checkpoint: holds, must be letters, digits and . _ - , : + = @ %%, not %q", a.name, v)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
