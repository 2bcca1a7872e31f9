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
// to the caller; the key is the trial's identity (identity.go) at the template's key and the
// trial's number.
func (t *Task) Instantiate(n int, params []Param) *Task {
	var pairs, labels []string
	labels = append(labels, "trial="+strconv.Itoa(n))
	for _, p := range params {
		pairs = append(pairs, "<"+p.Name+">", p.Value)
		labels = append(labels, p.Name+"="+p.Value)
	}
	r := strings.NewReplacer(pairs...)
	c := t.instantiate(r, params, identity(t.Key, "trial", strconv.Itoa(n)))
	if c.Name == t.Name {
		c.Name += " [" + strings.Join(labels, " ") + "]"
	}
	return c
}

// instantiate is the copy of t at place (its template's key and its trial's number) with r's
// placeholders filled in, identified by what it does there (identity.go).
func (t *Task) instantiate(r *strings.Replacer, params []Param, place string) *Task {
	c := *t
	c.Search = nil
	fill(r, c.placeholderTexts())
	c.Params = slices.Concat(t.Params, params)
	c.Steps = nil
	for _, s := range t.Steps {
		c.Steps = append(c.Steps, s.instantiate(r, params, identity(place, s.Key)))
	}
	c.Key = c.digest(place)
	return &c
}
