// Command limits checks the size limits runall's code keeps, for make check: no production
// Go file over 400 lines, no function over 60, no struct type over 12 fields or 15 methods
// anywhere in the module, no AWS SDK, go-nvml, process or resource package under
// runner/sched, and no call that removes, renames, truncates or appends to a path outside
// the helpers that go through an os.Root (fence.go). It names each offender with its place
// and the fix, and exits 1 when there is one. Then, as a warning that fails nothing, it
// lists the types and functions within one of a limit, so that the next change sees the
// room is full before it overflows.
//
// Usage: go run ./internal/limits [ROOT]
//
// The type rule is the one go run ../shared/tools/typesize DIR 12 15 checks with EITHER=1:
// fields and methods count those promoted from embedded types of the same package; a type
// whose doc comment carries a line "//limits:flat REASON" (a row of a file format, say),
// which must give its reason, has no field limit. Test files are not checked: a table of
// cases reads best whole.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The limits.
const (
	maxFileLines   = 400
	maxFuncLines   = 60
	maxTypeFields  = 12
	maxTypeMethods = 15
)

// A fence keeps a package from what sits above it: banned may be none of its dependencies
// (go list -deps, prefixes; a pattern ending in "$" is one package exactly); direct may be
// none of its own imports (a package it reaches through one it may use is let be).
type fence struct {
	pkg    string
	banned []string
	direct []string
	why    string
}

// fences: the scheduler knows trials, not the resources they are admitted by, the
// processes they run as, or S3; a trial's launch knows neither the run that drives it nor
// the consumers of its events (it reaches S3 only through runner/checkpoint's copies).
var fences = []fence{
	{pkg: "./runner/sched", why: "the scheduler must not know resources, processes or S3", banned: []string{
		"github.com/aws/", "github.com/NVIDIA/go-nvml", "github.com/runall/runall/runner/proc",
		"github.com/runall/runall/runner/admit", "github.com/runall/runall/runner/hostadmit",
		"github.com/runall/runall/claims", "gonum.org/", "github.com/runall/runall/runner/forecast",
	}},
	{pkg: "./runner/taskfile", why: "the task file's grammar must not carry the forecast's numerics (gonum)", banned: []string{
		"gonum.org/", "github.com/runall/runall/runner/forecast",
	}},
	{pkg: "./runner/trial", why: "a trial's launch must know neither the run's driver nor the consumers of its events", banned: []string{
		"github.com/runall/runall/runner$", "github.com/runall/runall/claims", "github.com/runall/runall/runner/claims",
		"github.com/runall/runall/runner/prune", "github.com/runall/runall/runner/rounds",
		"github.com/runall/runall/runner/output", "github.com/runall/runall/live", "github.com/runall/runall/report",
	}, direct: []string{"github.com/runall/runall/s3sync"}},
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	n, err := check(root, os.Stdout, true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "limits:", err)
		os.Exit(2)
	}
	if err := near(root, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "limits:", err)
		os.Exit(2)
	}
	if n > 0 {
		fmt.Printf("limits: %d offender(s)\n", n)
		os.Exit(1)
	}
}

// check reports every offender under root to w and returns how many there are; with
// deps, the fenced packages' dependencies too (root is then a checkout of the module).
func check(root string, w io.Writer, deps bool) (int, error) {
	files, err := goFiles(root)
	if err != nil {
		return 0, err
	}
	n := 0
	say := func(format string, args ...any) {
		fmt.Fprintf(w, format+"\n", args...)
		n++
	}
	var all []parsed
	for _, path := range files {
		f, err := parse(path)
		if err != nil {
			return n, err
		}
		rel, _ := filepath.Rel(root, path)
		f.rel = rel
		all = append(all, f)
		if f.lines > maxFileLines {
			say("%s: %d lines, more than %d: split it by what its parts do", rel, f.lines, maxFileLines)
		}
		for _, fn := range f.funcs {
			if fn.lines > maxFuncLines {
				say("%s:%d: func %s is %d lines, more than %d: give its steps functions of their own", rel, fn.line, fn.name, fn.lines, maxFuncLines)
			}
		}
	}
	for _, t := range typeSizes(all) {
		switch {
		case t.methods > maxTypeMethods:
			say("%s:%d: type %s has %d methods counting promoted ones, more than %d: hold its parts in fields rather than embedding them, and give each part its own methods",
				t.file, t.line, t.name, t.methods, maxTypeMethods)
		case t.fields > maxTypeFields && t.flat == "":
			say("%s:%d: type %s has %d fields counting promoted ones, more than %d: group them into parts, or mark a record that must stay flat with //limits:flat and why",
				t.file, t.line, t.name, t.fields, maxTypeFields)
		}
	}
	fenceReport(all, say)
	if !deps {
		return n, nil
	}
	for _, f := range fences {
		bad, err := fenceDeps(root, f)
		if err != nil {
			return n, err
		}
		for _, d := range bad {
			say("%s depends on %s (go list -deps %s): %s", f.pkg, d, f.pkg, f.why)
		}
	}
	return n, nil
}

// goFiles lists the production Go files under root, leaving out tests and what is not
// the project's (dot directories, testdata).
func goFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			out = append(out, path)
		}
		return nil
	})
	return out, err
}

// fenceDeps are the dependencies of f.pkg that its fence bans.
func fenceDeps(root string, f fence) ([]string, error) {
	deps, err := goList(root, "{{.ImportPath}}", "-deps", f.pkg)
	if err != nil {
		return nil, err
	}
	imports, err := goList(root, "{{join .Imports \"\\n\"}}", f.pkg)
	if err != nil {
		return nil, err
	}
	return append(matching(deps, f.banned), matching(imports, f.direct)...), nil
}

// goList is what go list -f format says of args, run in root, one entry a line.
func goList(root, format string, args ...string) ([]string, error) {
	cmd := exec.Command("go", append([]string{"list", "-f", format}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out)), nil
}

// matching are the packages of pkgs that one of patterns names: a prefix, or with "$" at
// its end the package exactly.
func matching(pkgs, patterns []string) []string {
	var out []string
	for _, p := range pkgs {
		for _, b := range patterns {
			exact, isExact := strings.CutSuffix(b, "$")
			if isExact && p == exact || !isExact && strings.HasPrefix(p, b) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
