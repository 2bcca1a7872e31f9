package plan

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
// after a mistake so that one `runall check` shows them all. The raw* types here hold what the
// file says; load.go validates them against each other and builds the Plan.

// nodeProblem is one mistake found while decoding. The node gives the line and column; the
// loader adds the file, which a node does not know (it may come from an included file).
type nodeProblem struct {
	node *yaml.Node
	msg  string
}

// nodeProblems is the error the raw types' UnmarshalYAML methods return: every mistake found.
type nodeProblems []nodeProblem

func (ps nodeProblems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d:%d: %s", p.node.Line, p.node.Column, p.msg)
	}
	return b.String()
}

// nodeDecoder collects the problems of one UnmarshalYAML call and reads typed values.
type nodeDecoder struct {
	problems nodeProblems
}

func (d *nodeDecoder) errorf(n *yaml.Node, format string, args ...any) {
	d.problems = append(d.problems, nodeProblem{n, fmt.Sprintf(format, args...)})
}

// absorb adds the problems of a nested UnmarshalYAML call.
func (d *nodeDecoder) absorb(err error) {
	if err == nil {
		return
	}
	var ps nodeProblems
	if errors.As(err, &ps) {
		d.problems = append(d.problems, ps...)
		return
	}
	d.problems = append(d.problems, nodeProblem{&yaml.Node{}, err.Error()})
}

func (d *nodeDecoder) err() error {
	if len(d.problems) == 0 {
		return nil
	}
	return d.problems
}

// resolveAlias follows aliases (*name) to the anchored node.
func resolveAlias(n *yaml.Node) *yaml.Node {
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

// nodePair is one key: value entry of a mapping; value has its aliases followed.
type nodePair struct {
	name       string
	key, value *yaml.Node
}

// pairs returns the entries of a mapping in file order, with YAML merge keys (<<: *defaults)
// applied the YAML way: the mapping's own keys win over merged ones. A key set twice is a
// problem. want says what was expected, for the error when n is not a mapping.
func (d *nodeDecoder) pairs(n *yaml.Node, want string) ([]nodePair, bool) {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s, got %s", want, describeNode(n))
		return nil, false
	}
	var own, merged []nodePair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, d.mergedPairs(v)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "want a plain key, got %s", describeNode(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(k, "key %q is set twice (first at line %d)", k.Value, first.Line)
			continue
		}
		seen[k.Value] = k
		own = append(own, nodePair{k.Value, k, resolveAlias(v)})
	}
	for _, p := range merged {
		if _, ok := seen[p.name]; !ok {
			seen[p.name] = p.key
			own = append(own, p)
		}
	}
	return own, true
}

func (d *nodeDecoder) mergedPairs(v *yaml.Node) []nodePair {
	v = resolveAlias(v)
	switch v.Kind {
	case yaml.MappingNode:
		ps, _ := d.pairs(v, "<<: want a mapping to merge")
		return ps
	case yaml.SequenceNode:
		var all []nodePair
		for _, item := range v.Content {
			all = append(all, d.mergedPairs(item)...)
		}
		return all
	}
	d.errorf(v, "<<: want a mapping or a list of mappings to merge, got %s", describeNode(v))
	return nil
}

// str reads a scalar as text, as written: `cmd: true` is the command "true". Null is "".
func (d *nodeDecoder) str(p nodePair) string {
	if isNull(p.value) {
		return ""
	}
	if p.value.Kind != yaml.ScalarNode {
		d.errorf(p.value, "%s: want a string, got %s", p.name, describeNode(p.value))
		return ""
	}
	return p.value.Value
}

// boolean reads true/false (and YAML 1.1's yes/no/on/off, which bashful's yaml.v2 accepted).
func (d *nodeDecoder) boolean(p nodePair) *bool {
	var b bool
	if p.value.Kind == yaml.ScalarNode && !isNull(p.value) && p.value.Decode(&b) == nil {
		return &b
	}
	d.errorf(p.value, "%s: want true or false, got %s", p.name, describeNode(p.value))
	return nil
}

// integer reads a whole number of at least lowest.
func (d *nodeDecoder) integer(p nodePair, lowest int) (int, bool) {
	if p.value.Kind == yaml.ScalarNode && !isNull(p.value) && wholeNumber(p.value.Value) {
		// Decimal digits only: YAML's decoder takes 2.5 as 2, and 0x10 or 1_000 as numbers.
		if i, err := strconv.Atoi(strings.TrimSpace(p.value.Value)); err == nil && i >= lowest {
			return i, true
		}
	}
	d.errorf(p.value, "%s: want a whole number of at least %d (decimal digits), got %s", p.name, lowest, describeNode(p.value))
	return 0, false
}

// wholeNumber reports whether s is written as a whole number: an optional sign and decimal
// digits.
func wholeNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "-"), "+")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// duration reads a Go duration greater than zero ("90s", "30m", "2h"). zero is what 0 (with
// or without a unit) means for this key, "" where it means nothing and is refused.
func (d *nodeDecoder) duration(p nodePair, zero string) time.Duration {
	if p.value.Kind == yaml.ScalarNode && !isNull(p.value) {
		s := strings.TrimSpace(p.value.Value)
		v, err := time.ParseDuration(s)
		if s == "0" || (err == nil && v == 0) {
			if zero != "" {
				return 0
			}
			d.errorf(p.value, "%s: want a duration greater than zero, such as 90s, 30m or 2h, got %s", p.name, describeNode(p.value))
			return 0
		}
		if err == nil && v > 0 {
			return v
		}
	}
	d.errorf(p.value, "%s: want a duration with a unit, such as 90s, 30m or 2h, got %s", p.name, describeNode(p.value))
	return 0
}

// stringOrList reads `tags: one` or `tags: [one, two]`. Null is an empty list.
func (d *nodeDecoder) stringOrList(p nodePair) []string {
	switch {
	case isNull(p.value):
		return nil
	case p.value.Kind == yaml.ScalarNode:
		return []string{p.value.Value}
	case p.value.Kind == yaml.SequenceNode:
		return d.scalarItems(p)
	}
	d.errorf(p.value, "%s: want a string or a list of strings, got %s", p.name, describeNode(p.value))
	return nil
}

// scalarList reads a non-empty list of scalars (for-each items, matrix values).
func (d *nodeDecoder) scalarList(p nodePair) []string {
	if p.value.Kind != yaml.SequenceNode || len(p.value.Content) == 0 {
		d.errorf(p.value, "%s: want a non-empty list of values, got %s", p.name, describeNode(p.value))
		return nil
	}
	return d.scalarItems(p)
}

func (d *nodeDecoder) scalarItems(p nodePair) []string {
	var out []string
	for _, item := range p.value.Content {
		item = resolveAlias(item)
		if item.Kind != yaml.ScalarNode || isNull(item) {
			d.errorf(item, "%s: want strings or numbers in the list, got %s", p.name, describeNode(item))
			continue
		}
		out = append(out, item.Value)
	}
	return out
}

// globs reads exclude patterns and checks their syntax.
func (d *nodeDecoder) globs(p nodePair) []string {
	pats := d.stringOrList(p)
	for _, g := range pats {
		if _, err := path.Match(g, ""); err != nil {
			d.errorf(p.value, "%s: bad glob pattern %q: %v", p.name, g, err)
		}
	}
	return pats
}

// unknownKey reports a key that has no meaning where it is, suggesting the nearest valid one.
func (d *nodeDecoder) unknownKey(p nodePair, where string, valid []string) {
	if s := Suggest(p.name, valid); s != "" {
		d.errorf(p.key, "unknown key %q (did you mean %q?)", p.name, s)
		return
	}
	d.errorf(p.key, "unknown key %q in %s (docs/taskfile.md lists the keys)", p.name, where)
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

// rawFile is the whole task file.
type rawFile struct {
	node   *yaml.Node
	config *rawConfig // nil when the file has no config:
	tasks  []*rawTask
	s3     *rawS3 // nil when the file has no s3:
}

var topLevelKeys = []string{"config", "tasks", "s3", "$include"}

// UnmarshalYAML decodes the top level of a task file whose includes have been spliced in.
func (f *rawFile) UnmarshalYAML(n *yaml.Node) error {
	d := &nodeDecoder{}
	f.node = resolveAlias(n)
	ps, ok := d.pairs(n, "want a mapping with a tasks: list at the top of the file")
	if !ok {
		return d.err()
	}
	sawTasks := false
	for _, p := range ps {
		switch {
		case (p.name == "config" || p.name == "s3") && isNull(p.value):
			// An empty block is no block: the defaults.
		case p.name == "config":
			f.config = &rawConfig{}
			d.absorb(f.config.UnmarshalYAML(p.value))
		case p.name == "tasks":
			sawTasks = true
			f.tasks = decodeTaskList(d, p)
		case p.name == "s3":
			f.s3 = &rawS3{}
			d.absorb(f.s3.UnmarshalYAML(p.value))
		case strings.HasPrefix(p.name, "x-"):
			// Holders of anchors for the rest of the file, as in docker-compose.
		default:
			if s := Suggest(p.name, topLevelKeys); s != "" {
				d.errorf(p.key, "unknown key %q (did you mean %q?)", p.name, s)
			} else {
				d.errorf(p.key, "unknown top-level key %q: want config, tasks, s3, $include, or a name starting with x- to hold anchors", p.name)
			}
		}
	}
	if !sawTasks {
		d.errorf(f.node, "no tasks: key: a task file needs a tasks: list")
	}
	return d.err()
}

// decodeTaskList reads a list of tasks (tasks:, parallel-tasks:, a trial's tasks:).
func decodeTaskList(d *nodeDecoder, p nodePair) []*rawTask {
	if p.value.Kind != yaml.SequenceNode || len(p.value.Content) == 0 {
		d.errorf(p.value, "%s: want a non-empty list of tasks, got %s", p.name, describeNode(p.value))
		return nil
	}
	var out []*rawTask
	for _, item := range p.value.Content {
		t := &rawTask{}
		d.absorb(t.UnmarshalYAML(item))
		out = append(out, t)
	}
	return out
}
