package taskfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// includer splices $include files into a parsed task file, at the yaml.Node level so that an
// anchored list holding `- $include apps.yml` is spliced in place and its aliases (*apps) see
// the included items. bashful did this by pasting text; nodes keep each file's own lines.
//
// Two forms, as in bashful:
//
//	$include: common-config.yml      in a mapping: the file's mapping is merged in
//	- $include common-tasks.yml      in a list: the file's list is spliced in
type includer struct {
	dir      string                // include paths are relative to it (not to the including file)
	fileOf   map[*yaml.Node]string // nodes read from included files → the path as written
	files    []string              // every file read, the task file first: orders problems
	stack    []string              // absolute paths of the files being spliced, to find cycles
	d        *Decoder              // problems at nodes
	problems []Problem             // problems with no node: syntax errors in included files
	loads    int                   // files read so far, bounded by maxIncludeLoads
}

// Splice expands every $include under root, which was read from the task file (path as
// given, abs its absolute path); include paths resolve against dir, and fileOf learns the
// file of each node read from an included file. It returns every file read, the task file
// first, the problems with no node (syntax errors in included files) and those at a node.
func Splice(root *yaml.Node, path, abs, dir string, fileOf map[*yaml.Node]string) ([]string, []Problem, NodeProblems) {
	in := &includer{dir: dir, fileOf: fileOf, files: []string{path}, d: &Decoder{}}
	in.splice(root, abs)
	return in.files, in.problems, in.d.Problems
}

// splice expands every $include under n, which was read from the file at abs.
func (in *includer) splice(n *yaml.Node, abs string) {
	in.stack = append(in.stack, abs)
	in.walk(n)
	in.stack = in.stack[:len(in.stack)-1]
}

// walk visits the tree without following aliases: an anchored node is visited where it is
// defined, once, and every alias to it then sees what was spliced into it.
func (in *includer) walk(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			in.walk(c)
		}
	case yaml.SequenceNode:
		in.sequence(n)
	case yaml.MappingNode:
		in.mapping(n)
	}
}

// listIncludeTarget reports whether a list item is an include: the scalar `$include path`,
// or a mapping holding only `$include: path`.
func listIncludeTarget(item *yaml.Node) (at *yaml.Node, target string, ok bool) {
	if item.Kind == yaml.ScalarNode {
		rest, found := strings.CutPrefix(item.Value, "$include")
		if found && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return item, strings.TrimSpace(rest), true
		}
	}
	if item.Kind == yaml.MappingNode && len(item.Content) == 2 && item.Content[0].Value == "$include" {
		return item.Content[1], item.Content[1].Value, true
	}
	return nil, "", false
}

func (in *includer) sequence(n *yaml.Node) {
	var out []*yaml.Node
	changed := false
	for _, item := range n.Content {
		at, target, ok := listIncludeTarget(item)
		if !ok {
			in.walk(item)
			out = append(out, item)
			continue
		}
		changed = true
		root := in.load(at, target)
		switch {
		case root == nil: // unreadable or empty: nothing to splice
		case root.Kind == yaml.SequenceNode:
			out = append(out, root.Content...)
		default:
			out = append(out, root)
		}
	}
	if changed {
		n.Content = out
	}
}

func (in *includer) mapping(n *yaml.Node) {
	var own []*yaml.Node      // the mapping's key/value pairs without its $include keys
	var included []*yaml.Node // the included files' mappings, in order
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value != "$include" {
			in.walk(v)
			own = append(own, k, v)
			continue
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			in.d.Errorf(v, "$include: want the path of a file, got %s", describeNode(v))
			continue
		}
		root := in.load(v, v.Value)
		if root == nil {
			continue
		}
		if root.Kind != yaml.MappingNode {
			in.d.Errorf(v, "$include %s: the file must hold a mapping (key: value) to be merged here, got %s; use `- $include %s` in a list", v.Value, describeNode(root), v.Value)
			continue
		}
		included = append(included, root)
	}
	if len(own) == len(n.Content) {
		return
	}
	n.Content = own
	for _, m := range included {
		mergeMapping(n, m)
	}
}

// mergeMapping adds src's entries to dst. A key dst already has keeps dst's value, except that
// two mappings are merged the same way: `$include: common-config.yml` next to `config:
// {log-path: x}` keeps both the included config and log-path.
func mergeMapping(dst, src *yaml.Node) {
	index := map[string]int{}
	for i := 0; i+1 < len(dst.Content); i += 2 {
		index[dst.Content[i].Value] = i + 1
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		j, exists := index[k.Value]
		if !exists {
			dst.Content = append(dst.Content, k, v)
			index[k.Value] = len(dst.Content) - 1
			continue
		}
		mine, theirs := dst.Content[j], ResolveAlias(v)
		if ResolveAlias(mine).Kind != yaml.MappingNode || theirs.Kind != yaml.MappingNode {
			continue
		}
		if mine.Kind == yaml.AliasNode { // merge into a copy: the anchored mapping is shared
			c := *ResolveAlias(mine)
			c.Content = append([]*yaml.Node(nil), c.Content...)
			c.Anchor = ""
			mine = &c
			dst.Content[j] = mine
		}
		mergeMapping(mine, theirs)
	}
}

// load reads and splices the included file target, named at the node at; nil when it
// cannot be read or holds nothing.
func (in *includer) load(at *yaml.Node, target string) *yaml.Node {
	if target == "" {
		in.d.Errorf(at, "$include: want the path of a file")
		return nil
	}
	abs := reach(in.dir, target) // the file itself, however named: a cycle through a link is one
	for i, f := range in.stack {
		if f == abs {
			chain := []string{}
			for _, g := range in.stack[i:] {
				chain = append(chain, in.display(g))
			}
			in.d.Errorf(at, "$include %s: include cycle: %s -> %s", target, strings.Join(chain, " -> "), target)
			return nil
		}
	}
	if in.loads++; in.loads > maxIncludeLoads {
		if in.loads == maxIncludeLoads+1 {
			in.d.Errorf(at, "$include %s: more than %d includes in all: files that include each other several times multiply; include each file once", target, maxIncludeLoads)
		}
		return nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		in.d.Errorf(at, "$include %s: %v (include paths are relative to the working directory)", target, err)
		return nil
	}
	in.files = append(in.files, target)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		in.problems = append(in.problems, SyntaxProblem(target, data, err))
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil
	}
	recordFile(&doc, target, in.fileOf)
	root := doc.Content[0]
	in.splice(root, abs)
	return root
}

// display names a file of the include stack the way problems name it.
func (in *includer) display(abs string) string {
	for _, f := range in.files {
		if reach(in.dir, f) == abs {
			return f
		}
	}
	return abs
}

// reach is the file that name, taken against dir, reaches: its links followed and a ".."
// taken after the link before it, as the kernel does (filepath.EvalSymlinks walks it so; the
// grammar keeps to the standard library, see internal/limits/deps.go); a name that reaches
// nothing is kept as written, and reading it says so.
func reach(dir, name string) string {
	p := name
	if !filepath.IsAbs(p) {
		p = strings.TrimSuffix(dir, "/") + "/" + p // not cleaned: its ".." is taken after dir's links
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if abs, err := filepath.Abs(real); err == nil {
			return abs
		}
	}
	return filepath.Clean(p)
}

// recordFile notes, for every node of an included file, which file it came from.
func recordFile(n *yaml.Node, file string, fileOf map[*yaml.Node]string) {
	fileOf[n] = file
	for _, c := range n.Content {
		recordFile(c, file, fileOf)
	}
}

// maxIncludeLoads bounds how many times $include files are read: files that include one
// another several times each would otherwise be read exponentially often.
const maxIncludeLoads = 1000
