package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// rootFiles: runner's root, file by file, from the top down, by the house's flow (task
// file → plan → scheduler → processes → events → outputs). A file that uses a name another
// file declares stands on its layer or above it; a use of a name declared on a layer above
// climbs, by the rule the package layers keep (climbing). Every production file of
// runner's root stands on one.
var rootFiles = []layer{
	{"the run", []string{"execute.go"}},                               // Run: starts the parts, runs the plan, ends them
	{"sources and the scheduler", []string{"sched.go", "sources.go"}}, // the trials' sources and runTasks over runner/sched
	// the stream's consumers the driver wires: the hooks, and the run as the live page sees it
	{"the stream", []string{"stream.go", "rounds_hook.go", "prune_hook.go", "watch.go"}},
	{"the run's parts", []string{"run.go", "rooms.go"}}, // runDriver and the parts it holds, built
	{"processes", []string{"launcher.go", "signals.go", "pause.go", "checkpoints.go", "s3.go", "s3conn.go", "fresh.go", "reap.go", "stop.go"}},
	{"events", []string{"lifecycle.go", "made.go"}},
	{"outputs", []string{"ledger.go", "ledger_live.go", "outcome.go", "output_pump.go"}},
	{"the run's givens", []string{"options.go", "errors.go", "doc.go"}}, // what the caller passes and gets back
}

// maxRootClimbs is how many pairs of runner's root's files may climb (the first uses a name
// the second declares, on a layer above its own): the count when the table was last written
// (issue 43 asked for 4 or fewer; the 5 this table found went with small moves: the Server,
// Watcher and View the caller passes to options.go, gather to watch.go, ErrIncompleteRecord
// to errors.go, the results' upload to s3.go, which the recorder is handed as a func).
const maxRootClimbs = 0

// rootFileReport counts the pairs of runner's root files (root/runner) of which the first
// uses a name the second declares, on a layer above it, and prints the count beside its
// limit to w; each climb over the limit, and a file on no layer, goes to say.
func rootFileReport(root string, w io.Writer, say func(string, ...any)) error {
	arrows, files, err := fileArrows(filepath.Join(root, "runner"))
	if err != nil {
		return err
	}
	on := func(file string) (int, bool) {
		i := slices.IndexFunc(rootFiles, func(l layer) bool { return slices.Contains(l.members, file) })
		return i, i >= 0
	}
	for _, f := range files {
		if _, ok := on(f); !ok {
			say("runner/%s stands on no layer of runner's root (internal/limits/rootfiles.go): add it to the one whose files it uses and is used by", f)
		}
	}
	tell(w, say, "runner's root", "files use a name from a layer above", climbing(arrows, rootFiles, on), maxRootClimbs)
	return nil
}

// fileArrows is, for the production files of the package in dir, each pair of files of
// which the first uses a name (package-level, a method or a field) the second declares, with
// the names; and the files, sorted. The package is type-checked alone: what it imports from
// outside the standard library is an empty package, which names of its own do not need.
func fileArrows(dir string) ([]arrow, []string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var names []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
		names = append(names, filepath.Base(p))
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: stdOnly{importer.Default()}, Error: func(error) {}}
	pkg, _ := conf.Check(filepath.Base(dir), fset, files, info)
	used := map[[2]string][]string{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !declaredForAll(obj, pkg) {
			continue
		}
		from, to := filepath.Base(fset.Position(id.Pos()).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to && !slices.Contains(used[[2]string{from, to}], obj.Name()) {
			used[[2]string{from, to}] = append(used[[2]string{from, to}], obj.Name())
		}
	}
	var arrows []arrow
	for k, n := range used {
		slices.Sort(n)
		arrows = append(arrows, arrow{k[0], k[1], "uses " + strings.Join(n, ", ") + " of"})
	}
	slices.SortFunc(arrows, func(a, b arrow) int { return strings.Compare(a.from+" "+a.to, b.from+" "+b.to) })
	return arrows, names, nil
}

// declaredForAll reports whether obj is declared where every file of pkg may use it: at the
// package's level, or as a method or a field.
func declaredForAll(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Signature().Recv() != nil || o.Parent() == pkg.Scope()
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

// stdOnly imports the standard library; any other package is an empty one of its name.
type stdOnly struct{ std types.Importer }

func (i stdOnly) Import(path string) (*types.Package, error) {
	if !strings.Contains(strings.Split(path, "/")[0], ".") {
		if p, err := i.std.Import(path); err == nil {
			return p, nil
		}
	}
	p := types.NewPackage(path, filepath.Base(path))
	p.MarkComplete()
	return p, nil
}
