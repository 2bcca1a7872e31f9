package plan

import (
	"slices"
	"strconv"
	"strings"
)

// Instantiate makes trial number n of a search template (a parallel child with search:) from
// the params its sampler handed out: a copy with <name> replaced by each param's value, in
// the texts for-each and matrix fill (see placeholders.go), and its steps'. A name
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
	fill(r, c.placeholderTexts())
	c.Params = slices.Concat(t.Params, params)
	c.Steps = nil
	for _, s := range t.Steps {
		cs := s.instantiate(r, params)
		cs.Key = identity(s.Key, c.Name)
		c.Steps = append(c.Steps, cs)
	}
	return &c
}
