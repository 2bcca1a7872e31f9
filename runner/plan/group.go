package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// templatePath is a task's template path: its parents' templates and its own (names and
// commands as written), "/"-separated, as joinPath joins them. Task.Group is its identity.
//
// A block's template holds all its trials' commands, so the path is never built as text for
// each trial: the block's path is hashed once, and each trial adds its own template to a
// clone of that hash. Building and hashing the whole path per trial cost n copies of the
// block's text for n trials: 22 MB allocated while loading a block of 1000 one-word trials,
// which set runall's peak RSS (docs/benchmarks.md, the core benchmark).
type templatePath struct {
	parent *templatePath // nil for a top-level task
	own    string        // the task's template; never empty (it holds a NUL)
	hash   hash.Hash     // the path and "/" hashed, for the children; made by the first
}

// group is identity(the path), computed without building it.
func (p *templatePath) group() string {
	h := p.parent.childHash()
	h.Write([]byte(p.own))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// childHash is a hash of the path and "/", which a child continues with its template; of
// nothing for nil, the parent of top-level tasks (joinPath adds no "/" to an empty parent).
func (p *templatePath) childHash() hash.Hash {
	if p == nil {
		return sha256.New()
	}
	if p.hash == nil {
		h := p.parent.childHash()
		h.Write([]byte(p.own))
		h.Write([]byte{'/'})
		p.hash = h
	}
	if c, ok := p.hash.(hash.Cloner); ok {
		if h, err := c.Clone(); err == nil {
			return h
		}
	}
	// A hash that cannot be cloned (a FIPS 140 v1.0.0 build): hash the path's text again.
	h := sha256.New()
	h.Write([]byte(p.text() + "/"))
	return h
}

// text is the path as joinPath builds it.
func (p *templatePath) text() string {
	if p == nil {
		return ""
	}
	return joinPath(p.parent.text(), p.own)
}

// joinPath is a task's name path: its parents' names and its own, "/"-separated.
func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}
