package plan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Instantiate makes trial number n of a search template (a parallel child with search:) from
// the params its sampler handed out. They come from outside the task file, so they are data
// (bind.go): in the texts for-each and matrix fill (see placeholders.go), and its steps', a
// placeholder in a command becomes a quoted reference to the param's variable (ParamVar,
// which the runner sets from Params); one in a text that is expanded against the
// environment (env: values, cwd, url, metrics, upload) a ${reference} to it; one in a text
// that is only shown or names a file (name, tags, log-path) the value itself. A name without
// placeholders gets the params appended, as matrix names its copies. IDs are left to the
// caller; the key is the trial's identity (identity.go) at the template's key and the trial's
// number. Params that cannot be handed over safely are an error, and so are those on-oom
// cannot halve (its halve: names none of them, or one that is no whole number); with on-oom
// the trial has a space its param is halved in (searchSpace).
func (t *Task) Instantiate(n int, params []Param) (*Task, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	if o := OnOOMOf(t); o != nil {
		if err := searchedOnOOM(o.Halve, params); err != nil {
			return nil, err
		}
	}
	left := slices.DeleteFunc(unfilledIn(t), func(name string) bool {
		return slices.ContainsFunc(params, func(p Param) bool { return p.Name == name })
	})
	if len(left) > 0 {
		return nil, fmt.Errorf("the sampler gave no value for <%s>, which the command would read as a redirection: have ask print it among the params", strings.Join(slices.Compact(slices.Sorted(slices.Values(left))), ">, <"))
	}
	if err := t.checkPathValues(params); err != nil {
		return nil, err
	}
	labels := []string{"trial=" + strconv.Itoa(n)}
	for _, p := range params {
		labels = append(labels, p.Name+"="+p.Value)
	}
	c, err := t.instantiate(params, identity(t.Key, "trial", strconv.Itoa(n)))
	if err != nil {
		return nil, err
	}
	var u []keyText
	Walk([]*Task{c}, func(s *Task) { u = append(u, unfilledTexts(s)...) })
	if len(u) > 0 {
		return nil, fmt.Errorf("%s: the sampler gave no value for <%s>, which would stay the text <%s>: have ask print it among the params", u[0].key, u[0].text, u[0].text)
	}
	if err := unsetParamRefs(c, c.Params); err != nil { // the template's own (a block's matrix) and the sampler's
		return nil, err
	}
	if c.Name == t.Name {
		c.Name += " [" + strings.Join(labels, " ") + "]"
	}
	if OnOOMOf(t) != nil {
		c.Space = searchSpace(t, params)
	}
	return c, nil
}

// searchedOnOOM refuses a sampler's params that on-oom's halve: cannot halve: the param it
// names is not among them, or is no whole number. A value below min runs, and is not halved.
func searchedOnOOM(halve string, params []Param) error {
	i := slices.IndexFunc(params, func(p Param) bool { return p.Name == halve })
	if i < 0 {
		var names []string
		for _, p := range params {
			names = append(names, "<"+p.Name+">")
		}
		return fmt.Errorf("on-oom: halve: <%s> is not among the params the sampler gave (%s): have ask print it among the params, or halve one it gives", halve, joinOrNone(names))
	}
	if _, err := strconv.Atoi(params[i].Value); err != nil {
		return fmt.Errorf("on-oom: halve: <%s> is %q from the sampler: want a whole number (suggest an int)", halve, params[i].Value)
	}
	return nil
}

// searchSpace is the space a search trial's on-oom halves its param in: its template, with
// each of the sampler's params an axis whose values go in as data, as Instantiate put them
// (Variant makes the trial with a halved value from it, its name, identity and checkpoint
// its own). Its axes have no values to draw: no rule draws from a search trial's space.
func searchSpace(tmpl *Task, params []Param) *Space {
	s := &Space{Template: tmpl}
	for _, p := range params {
		s.Axes = append(s.Axes, Axis{name: p.Name, data: true})
	}
	return s
}

// unsetParamRefs refuses a ${RUNALL_PARAM_<name>} written in a text of t or its steps (its
// template's placeholder, paramRefs) that none of params sets: it would expand to nothing.
func unsetParamRefs(t *Task, params []Param) error {
	var bad error
	set := func(name string) bool {
		return !strings.HasPrefix(name, ParamVar("")) || slices.ContainsFunc(params, func(p Param) bool { return ParamVar(p.Name) == name })
	}
	Walk([]*Task{t}, func(s *Task) {
		for _, kt := range s.valueTexts() {
			if i := slices.IndexFunc(Vars(kt.text), func(name string) bool { return !set(name) }); bad == nil && i >= 0 {
				bad = fmt.Errorf("%s: the sampler gave no value for ${%s}, which would expand to nothing: have ask print it among the params", kt.key, Vars(kt.text)[i])
			}
		}
	})
	return bad
}

// unfilledIn lists the placeholders left in the commands of t and its steps.
func unfilledIn(t *Task) []string {
	var out []string
	Walk([]*Task{t}, func(t *Task) { out = append(out, unfilledOf(t)...) })
	return out
}

// checkParams refuses params that no variable can hand over: a value with a NUL, an empty
// name, or two names that would be the same variable.
func checkParams(params []Param) error {
	vars := map[string]string{}
	for _, p := range params {
		switch {
		case p.Name == "":
			return errors.New("a param with an empty name")
		case strings.ContainsRune(p.Value, 0) || strings.ContainsRune(p.Name, 0):
			return fmt.Errorf("param %q holds a NUL character, which no command or variable can carry", p.Name)
		}
		v := ParamVar(p.Name)
		if other, ok := vars[v]; ok {
			return fmt.Errorf("params %q and %q would both be handed over as $%s: rename one", other, p.Name, v)
		}
		vars[v] = p.Name
	}
	return nil
}

// instantiate is the copy of t at place (its template's key and its trial's number) with
// the placeholders of params filled in, identified by what it does there (identity.go).
func (t *Task) instantiate(params []Param, place string) (*Task, error) {
	var values, refs []string
	for _, p := range params {
		values = append(values, "<"+p.Name+">", p.Value)
		refs = append(refs, "<"+p.Name+">", "${"+ParamVar(p.Name)+"}")
	}
	c := *t
	c.Search = nil
	cmd, err := bindCommand(t.Cmd, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	fill(strings.NewReplacer(values...), c.placeholderTexts())
	c.Cmd = cmd
	expanded := strings.NewReplacer(refs...)
	c.Cwd, c.URL, c.Metrics = expanded.Replace(t.Cwd), expanded.Replace(t.URL), expanded.Replace(t.Metrics)
	for i := range c.Env {
		c.Env[i].Value = expanded.Replace(t.Env[i].Value)
	}
	for i := range c.Upload {
		c.Upload[i].From, c.Upload[i].To = expanded.Replace(t.Upload[i].From), expanded.Replace(t.Upload[i].To)
	}
	c.Params = slices.Concat(t.Params, params)
	c.Steps = nil
	for _, s := range t.Steps {
		cs, err := s.instantiate(params, identity(place, s.Key))
		if err != nil {
			return nil, err
		}
		c.Steps = append(c.Steps, cs)
	}
	c.Key = c.digest(place)
	return &c, nil
}
