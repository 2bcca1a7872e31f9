package plan

import "strings"

// bound puts params, values that are data (sample:'s draws), into t, its trials and its
// steps as Instantiate puts a sampler's: each command refers to their variables
// (bindCommand), the texts expanded against the environment (cwd, url, metrics, env,
// upload) hold ${references} to them, and the others (name, tags, log-path, checkpoint)
// the values, refused where they would take a path out of its place (pathvalues.go). t is
// a copy of its own (substituted).
func (t *rawTask) bound(params []Param) error {
	if len(params) == 0 {
		return nil
	}
	if err := checkPathValues(t.pathTexts(), params); err != nil {
		return err
	}
	cmd, err := bindCommand(t.cmd, params)
	if err != nil {
		return err
	}
	var values, refs []string
	for _, p := range params {
		values = append(values, "<"+p.Name+">", p.Value)
		refs = append(refs, "<"+p.Name+">", "${"+ParamVar(p.Name)+"}")
	}
	expanded := []*string{&t.cwd, &t.url, &t.metrics}
	for i := range t.env {
		expanded = append(expanded, &t.env[i].Value)
	}
	for _, u := range t.upload {
		expanded = append(expanded, &u.Transfer.From, &u.Transfer.To)
	}
	fill(strings.NewReplacer(refs...), expanded)
	t.cmd = cmd
	fill(strings.NewReplacer(values...), t.placeholderTexts())
	for _, c := range t.parallel {
		if err := c.bound(params); err != nil {
			return err
		}
	}
	for _, s := range t.steps {
		if err := s.bound(params); err != nil {
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
