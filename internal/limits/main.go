// Command limits checks the size limits runall's code keeps, for make check: no production
// Go file over 400 lines, no function over 60, no struct type over 12 fields or 15 methods
// anywhere in the module; no dependency of a fenced package that its fence does not allow,
// nor more of them than its limit (deps.go: one table, each count printed beside its limit);
// no more imports that climb the house's layers than their limit (layers.go, the count
// printed), nor more files of runner's root that use a name from a file on a layer above
// (rootfiles.go, by the same rule); and no call that removes, renames, truncates or appends to a path outside the
// helpers that go through an os.Root (fence.go). It names each offender with its place and
// the fix, and exits 1 when there is one. Then, as a warning that fails nothing, it lists
// the types and functions within one of a limit, so that the next change sees the room is
// full before it overflows.
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
	if err := dependencyReport(root, w, say); err != nil {
		return n, err
	}
	if err := layerReport(root, w, say); err != nil {
		return n, err
	}
	return n, rootFileReport(root, w, say)
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
