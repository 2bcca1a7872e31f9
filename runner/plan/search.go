package plan

import (
	"slices"
	"strconv"
	"strings"
)

// Instantiate makes trial number n of a search template (a parallel child with search:) from
// the params its sampler handed out: a copy with <name> replaced by each param's value, in
// its name, command, cwd, env, log and metrics paths and uploads, and its steps'. A name
// without placeholders gets the params appended, as matrix names its copies. IDs are left
// to the caller; the key is the template's and the trial's number.
func (t *Task) Instantiate(n int, params []Param) *Task {
	var pairs, labels []string
	labels = append(labels, "trial="+strconv.Itoa(n))
	for _, p := range params {
		pairs = append(pairs, "<"+p.Name+">", p.Value)
		labels = append(labels, p.Name+"="+p.Value)
	}
	r := strings.NewReplacer(pairs...)
	c := t.instantiate(r, params)
	c.Key = identity(t.Key, "trial", strconv.Itoa(n))
	if c.Name == t.Name {
		c.Name += " [" + strings.Join(labels, " ") + "]"
	}
	return c
}

func (t *Task) instantiate(r *strings.Replacer, params []Param) *Task {
	c := *t
	c.Search = nil
	c.Name, c.Cmd, c.Cwd, c.LogPath, c.Metrics = r.Replace(t.Name), r.Replace(t.Cmd), r.Replace(t.Cwd), r.Replace(t.LogPath), r.Replace(t.Metrics)
	c.Params = slices.Concat(t.Params, params)
	c.Tags = nil
	for _, tag := range t.Tags {
		c.Tags = append(c.Tags, r.Replace(tag))
	}
	c.Env = nil
	for _, e := range t.Env {
		c.Env = append(c.Env, EnvVar{e.Name, r.Replace(e.Value)})
	}
	c.Upload = nil
	for _, u := range t.Upload {
		u.From, u.To = r.Replace(u.From), r.Replace(u.To)
		c.Upload = append(c.Upload, u)
	}
	c.Steps = nil
	for _, s := range t.Steps {
		cs := s.instantiate(r, params)
		cs.Key = identity(s.Key, c.Name)
		c.Steps = append(c.Steps, cs)
	}
	return &c
}
