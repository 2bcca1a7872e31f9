package main

import (
	"fmt"
	"io"
	"strings"
)

// A layer is one floor of the house: the packages of the module it holds, named as the
// fences name them (deps.go: "runner/plan", "gpu/..."), or in runner's root the files
// (rootfiles.go). A package stands on the layer of the entry that names it most closely: its
// exact path, else the longest "/..." above it.
type layer struct {
	name    string
	members []string
}

// layers: the house from the top down. An import from a package to one on a layer above its
// own climbs; imports within a layer and down are the flow (task file → plan → scheduler →
// processes → events → results). Every package of the module stands on one.
var layers = []layer{
	{"cmd", []string{"cmd/...", "live", "bench/..."}}, // the command, the page it serves (live implements runner.Server), the benchmarks' tools
	{"runner's root", []string{"runner"}},             // the driver: it composes a run of the packages below
	// what admits, schedules, runs, reacts, shows and keeps: runner/'s policy packages, and
	// the report, which draws the records
	{"policy", []string{"runner/...", "report"}},
	{"records and grammar", []string{"runner/taskfile", "runner/plan", "runner/event", "runner/results", "internal/plantest"}},
	// what knows no task: the machine, processes, stores, the Pod runall runs in, sizes, the maths of the rules, the
	// parsers of a trial's output, the book of needs, and the module's internals
	{"leaves", []string{"gpu/...", "s3sync", "claims", "hostmem", "size", "k8spod", "internal/...",
		"runner/proc", "runner/framework", "runner/needs", "runner/metric", "runner/progress",
		"runner/earlystop", "runner/importance", "runner/failclass"}},
}

// maxClimbs is how many imports may climb the layers: the count when the table was last
// written. What climbs between the files of runner's root, below this table's grain, has a
// table of its own (rootfiles.go), held to the same rule (climbing).
const maxClimbs = 0

// layerReport counts the imports among the module's packages (go list in root) that climb
// the layers, and prints the count beside its limit to w; each climb over the limit, and a
// package on no layer, goes to say.
func layerReport(root string, w io.Writer, say func(string, ...any)) error {
	lines, err := goList(root, "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	if err != nil {
		return err
	}
	var arrows []arrow
	for _, l := range lines {
		f := strings.Fields(l)
		if _, ok := layerOf(f[0]); !ok {
			say("%s stands on no layer of internal/limits/layers.go: add it to the one whose packages it imports and is imported by", f[0])
			continue
		}
		for _, imp := range f[1:] {
			arrows = append(arrows, arrow{f[0], imp, "imports"})
		}
	}
	tell(w, say, "layers", "imports climb", climbing(arrows, layers, layerOf), maxClimbs)
	return nil
}

// An arrow is one thing's use of another: a package's import of a package, or a file's use
// of a name (a type, func, var, const, method or field) that another file of its package
// declares, how saying which (the names, for a file).
type arrow struct{ from, to, how string }

// climbing is the one rule both tables keep: an arrow climbs when what it reaches stands on
// a layer above its own (on: the index of a thing's layer in table, false for one on none).
// Arrows within a layer and down are the flow. Each climb is said as a line.
func climbing(arrows []arrow, table []layer, on func(string) (int, bool)) []string {
	var out []string
	for _, a := range arrows {
		from, ok := on(a.from)
		if !ok {
			continue
		}
		if to, ok := on(a.to); ok && to < from {
			out = append(out, fmt.Sprintf("%s (%s) %s %s (%s)", a.from, table[from].name, a.how, a.to, table[to].name))
		}
	}
	return out
}

// tell prints what climbs beside its limit to w, and each climb to say when they are over it.
func tell(w io.Writer, say func(string, ...any), what, unit string, climbs []string, limit int) {
	fmt.Fprintf(w, "%s: %d %s (limit %d)\n", what, len(climbs), unit, limit)
	if len(climbs) > limit {
		for _, c := range climbs {
			say("%s, a layer above its own: %d climb, more than %d (internal/limits/layers.go)", c, len(climbs), limit)
		}
	}
}

// layerOf is the index of the layer that pkg (a whole path) stands on; false for a package
// outside the module or on no layer.
func layerOf(pkg string) (int, bool) {
	if !strings.HasPrefix(pkg, module) {
		return 0, false
	}
	best, at := -1, 0
	for i, l := range layers {
		for _, p := range l.members {
			if !names(p, pkg) {
				continue
			}
			closeness := len(p)
			if !strings.HasSuffix(p, "/...") {
				closeness += len(pkg) // an exact path beats any "/..." above it
			}
			if closeness > best {
				best, at = closeness, i
			}
		}
	}
	return at, best >= 0
}
