package taskfile

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The task file is decoded from yaml.Node trees by hand rather than into tagged structs: a node
// knows its line and column, so every mistake can be reported where it is, and decoding goes on
// after a mistake so that one `runall check` shows them all. The tree's types (File, Task,
// ConfigBlock, ...) hold what the file says; package plan checks them against each other and
// builds the plan.

// NodeProblem is one mistake found while decoding. The node gives the line and column; the
// plan's loader adds the file, which a node does not know (it may come from an included file).
type NodeProblem struct {
	Node *yaml.Node
	Msg  string
}

// NodeProblems is the error the tree's UnmarshalYAML methods return: every mistake found.
type NodeProblems []NodeProblem

func (ps NodeProblems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d:%d: %s", p.Node.Line, p.Node.Column, p.Msg)
	}
	return b.String()
}

// Decoder collects the problems of one UnmarshalYAML call and reads typed values.
type Decoder struct {
	Problems NodeProblems
}

func (d *Decoder) Errorf(n *yaml.Node, format string, args ...any) {
	d.Problems = append(d.Problems, NodeProblem{n, fmt.Sprintf(format, args...)})
}

// Absorb adds the problems of a nested UnmarshalYAML call.
func (d *Decoder) Absorb(err error) {
	if err == nil {
		return
	}
	var ps NodeProblems
	if errors.As(err, &ps) {
		d.Problems = append(d.Problems, ps...)
		return
	}
	d.Problems = append(d.Problems, NodeProblem{&yaml.Node{}, err.Error()})
}

func (d *Decoder) Err() error {
	if len(d.Problems) == 0 {
		return nil
	}
	return d.Problems
}

// ResolveAlias follows aliases (*name) to the anchored node.
func ResolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// describeNode names what a node holds, for "want X, got Y" messages.
func describeNode(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		return "an empty list"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode && len(n.Content) == 0:
		return "an empty mapping"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	}
	return "something else"
}

// Pair is one key: value entry of a mapping; value has its aliases followed.
type Pair struct {
	Name       string
	Key, Value *yaml.Node
}

// Pairs returns the entries of a mapping in file order, with YAML merge keys (<<: *defaults)
// applied the YAML way: the mapping's own keys win over merged ones. A key set twice is a
// problem. want says what was expected, for the error when n is not a mapping.
func (d *Decoder) Pairs(n *yaml.Node, want string) ([]Pair, bool) {
	n = ResolveAlias(n)
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, "%s, got %s", want, describeNode(n))
		return nil, false
	}
	var own, merged []Pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, d.mergedPairs(v)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.Errorf(k, "want a plain key, got %s", describeNode(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.Errorf(k, "key %q is set twice (first at line %d)", k.Value, first.Line)
			continue
		}
		seen[k.Value] = k
		own = append(own, Pair{k.Value, k, ResolveAlias(v)})
	}
	for _, p := range merged {
		if _, ok := seen[p.Name]; !ok {
			seen[p.Name] = p.Key
			own = append(own, p)
		}
	}
	return own, true
}

func (d *Decoder) mergedPairs(v *yaml.Node) []Pair {
	v = ResolveAlias(v)
	switch v.Kind {
	case yaml.MappingNode:
		ps, _ := d.Pairs(v, "<<: want a mapping to merge")
		return ps
	case yaml.SequenceNode:
		var all []Pair
		for _, item := range v.Content {
			all = append(all, d.mergedPairs(item)...)
		}
		return all
	}
	d.Errorf(v, "<<: want a mapping or a list of mappings to merge, got %s", describeNode(v))
	return nil
}

// Str reads a scalar as text, as written: `cmd: true` is the command "true". Null is "".
func (d *Decoder) Str(p Pair) string {
	if isNull(p.Value) {
		return ""
	}
	if p.Value.Kind != yaml.ScalarNode {
		d.Errorf(p.Value, "%s: want a string, got %s", p.Name, describeNode(p.Value))
		return ""
	}
	return p.Value.Value
}

// Boolean reads true/false (and YAML 1.1's yes/no/on/off, which bashful's yaml.v2 accepted).
func (d *Decoder) Boolean(p Pair) *bool {
	var b bool
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) && p.Value.Decode(&b) == nil {
		return &b
	}
	d.Errorf(p.Value, "%s: want true or false, got %s", p.Name, describeNode(p.Value))
	return nil
}

// Integer reads a whole number of at least lowest.
func (d *Decoder) Integer(p Pair, lowest int) (int, bool) {
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) && wholeNumber(p.Value.Value) {
		// Decimal digits only: YAML's decoder takes 2.5 as 2, and 0x10 or 1_000 as numbers.
		if i, err := strconv.Atoi(strings.TrimSpace(p.Value.Value)); err == nil && i >= lowest {
			return i, true
		}
	}
	d.Errorf(p.Value, "%s: want a whole number of at least %d (decimal digits), got %s", p.Name, lowest, describeNode(p.Value))
	return 0, false
}

// wholeNumber reports whether s is written as a whole number: an optional sign and decimal
// digits.
func wholeNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "-"), "+")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Duration reads a Go Duration greater than zero ("90s", "30m", "2h"). zero is what 0 (with
// or without a unit) means for this key, "" where it means nothing and is refused.
func (d *Decoder) Duration(p Pair, zero string) time.Duration {
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) {
		s := strings.TrimSpace(p.Value.Value)
		v, err := time.ParseDuration(s)
		if s == "0" || (err == nil && v == 0) {
			if zero != "" {
				return 0
			}
			d.Errorf(p.Value, "%s: want a duration greater than zero, such as 90s, 30m or 2h, got %s", p.Name, describeNode(p.Value))
			return 0
		}
		if err == nil && v > 0 {
			return v
		}
	}
	d.Errorf(p.Value, "%s: want a duration with a unit, such as 90s, 30m or 2h, got %s", p.Name, describeNode(p.Value))
	return 0
}

// StringOrList reads `tags: one` or `tags: [one, two]`. Null is an empty list.
func (d *Decoder) StringOrList(p Pair) []string {
	switch {
	case isNull(p.Value):
		return nil
	case p.Value.Kind == yaml.ScalarNode:
		return []string{p.Value.Value}
	case p.Value.Kind == yaml.SequenceNode:
		return d.scalarItems(p)
	}
	d.Errorf(p.Value, "%s: want a string or a list of strings, got %s", p.Name, describeNode(p.Value))
	return nil
}

// ScalarList reads a non-empty list of scalars (for-each items, matrix values).
func (d *Decoder) ScalarList(p Pair) []string {
	if p.Value.Kind != yaml.SequenceNode || len(p.Value.Content) == 0 {
		d.Errorf(p.Value, "%s: want a non-empty list of values, got %s", p.Name, describeNode(p.Value))
		return nil
	}
	return d.scalarItems(p)
}

func (d *Decoder) scalarItems(p Pair) []string {
	var out []string
	for _, item := range p.Value.Content {
		item = ResolveAlias(item)
		if item.Kind != yaml.ScalarNode || isNull(item) {
			d.Errorf(item, "%s: want strings or numbers in the list, got %s", p.Name, describeNode(item))
			continue
		}
		out = append(out, item.Value)
	}
	return out
}

// Globs reads exclude patterns and checks their syntax.
func (d *Decoder) Globs(p Pair) []string {
	pats := d.StringOrList(p)
	for _, g := range pats {
		if _, err := path.Match(g, ""); err != nil {
			d.Errorf(p.Value, "%s: bad glob pattern %q: %v", p.Name, g, err)
		}
	}
	return pats
}

// UnknownKey reports a key that has no meaning where it is, suggesting the nearest valid one.
func (d *Decoder) UnknownKey(p Pair, where string, valid []string) {
	if s := Suggest(p.Name, valid); s != "" {
		d.Errorf(p.Key, "unknown key %q (did you mean %q?)", p.Name, s)
		return
	}
	d.Errorf(p.Key, "unknown key %q in %s (docs/taskfile.md lists the keys)", p.Name, where)
}

// Suggest returns the valid name nearest to got, or "" when none is near enough to be a typo:
// a key of the task file, or a metric the trials reported.
func Suggest(got string, valid []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }
	g := norm(got)
	limit := 1
	switch {
	case len(g) >= 12:
		limit = 3
	case len(g) >= 6:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, v := range valid {
		if dist := editDistance(g, norm(v)); dist < bestDist {
			best, bestDist = v, dist
		}
	}
	if best != "" {
		return best
	}
	if len(g) >= 3 {
		for _, v := range valid {
			if strings.HasPrefix(norm(v), g) {
				return v
			}
		}
	}
	return ""
}

// editDistance is the optimal-string-alignment distance: insertions, deletions, substitutions
// and transpositions of neighbours ("cdm" is one edit from "cmd").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
