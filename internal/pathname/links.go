package pathname

import (
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Links are the symbolic links a tree is to hold (a checkpoint's manifest, an archive's
// entries), by slash-separated name relative to the tree's top, each to its target. A set
// of them may be made only where each stays inside the tree as the kernel will resolve it
// once all are made: a name that goes through another link of the set (made at the top,
// {"a": ".", "a/a/step": "../../x"}, it is "step" pointing two levels up) or a target that
// does ({"a": ".", "b": "a/.."} leads to the tree's parent, though "a/.." reads as ".")
// would put a link, and the next write through it, outside the tree.
type Links map[string]string

// Through is the link of l on name's way (a folder of name that is a link), "" when none:
// making name would write through it.
func (l Links) Through(name string) string {
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		if _, ok := l[d]; ok {
			return d
		}
	}
	return ""
}

// Why says why the link at name to target cannot be among l ("" when it can): its name must
// be a plain relative path through no other link of l, and its target must resolve, among
// l's links, inside the tree.
func (l Links) Why(name, target string) string {
	switch {
	case !filepath.IsLocal(filepath.FromSlash(name)) || strings.ContainsRune(name, 0) || path.Clean(name) != name:
		return "its name leaves the directory"
	case target == "" || strings.ContainsRune(target, 0):
		return "it has no target"
	case path.IsAbs(target) || filepath.IsAbs(target):
		return "its target is an absolute path"
	}
	if d := l.Through(name); d != "" {
		return "its name goes through the link " + d
	}
	hops := 0
	if _, ok := l.resolve(strings.Split(path.Dir(name), "/"), target, &hops); !ok {
		if hops > maxHops {
			return "its target is a loop of links"
		}
		return "its target leaves the directory"
	}
	return ""
}

// Refused is each link of l that cannot be made, with why (Why), judged among those that
// can: what is left once they are taken out holds only links that stay inside. Empty when
// all can be made.
func (l Links) Refused() map[string]string {
	ok := maps.Clone(l)
	refused := map[string]string{}
	for changed := true; changed; {
		changed = false
		for _, name := range slices.Sorted(maps.Keys(ok)) {
			if why := Links(ok).Why(name, ok[name]); why != "" {
				refused[name] = why
				delete(ok, name)
				changed = true
			}
		}
	}
	return refused
}

// resolve is the folder (its parts from the top) that target, read by a link in folder
// from, reaches among l's links; ok is false when it leaves the top.
func (l Links) resolve(from []string, target string, hops *int) (cur []string, ok bool) {
	cur = slices.Clone(from)
	if len(cur) == 1 && cur[0] == "." {
		cur = nil
	}
	for _, seg := range strings.Split(filepath.ToSlash(target), "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return nil, false
			}
			cur = cur[:len(cur)-1]
			continue
		}
		cur = append(cur, seg)
		next, isLink := l[strings.Join(cur, "/")]
		if !isLink {
			continue
		}
		if *hops++; *hops > maxHops || path.IsAbs(next) {
			return nil, false
		}
		if cur, ok = l.resolve(cur[:len(cur)-1], next, hops); !ok {
			return nil, false
		}
	}
	return cur, true
}
