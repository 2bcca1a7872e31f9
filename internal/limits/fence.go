package main

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// The fence holds rule 1 of runall ("runall deletes, empties or replaces only what it
// created, inside places it owns"): a call that removes, renames, truncates or appends to a
// path by its name is an offender outside the helpers of fenceAllowed. Such calls go through
// internal/owned (a directory runall owns, reached through an os.Root: a name that leaves it
// by "..", an absolute path or a planted symlink is refused) or a method of an *os.Root,
// which the fence never names: a method is not a call of the os package.
//
// Fenced, with why: os.Remove and os.RemoveAll delete; os.Rename replaces its target;
// os.Truncate empties; os.WriteFile and os.Create truncate what is there; os.OpenFile with
// O_TRUNC empties and with O_APPEND adds to a file that may not be runall's, and one whose
// flags are not written at the call cannot be told apart; the same for ioutil.WriteFile and
// the syscall and x/sys/unix calls under them (Unlink, Rmdir, Rename, Truncate, Open).
//
// Not fenced, with why: os.Mkdir, os.MkdirAll, os.MkdirTemp, os.CreateTemp, os.Symlink and
// os.Link only add a name (the last four fail on one that is there); os.Chmod, os.Chtimes
// and os.Chown change no content. Methods of an *os.File (Truncate, WriteAt) act on a file
// its open named, which is where the fence looks; a file opened O_RDWR and then truncated is
// beyond what a check of the syntax sees, as a command run through a shell (rm, mv) is.

// fenceAllowed are the files whose fenced calls are allowed, each with its reason. An
// entry that matches files none of which makes a fenced call any more is named, so that
// the list only shrinks. internal/owned is not here: it goes through os.Root alone.
var fenceAllowed = []struct{ glob, why string }{
	{"internal/outfile/append.go", "appends a task's log where log-path: or --log-dir points, " +
		"following a symlink there by design, as a shell's >> would (outfile replaces files through internal/owned)"},
	{"bench/*/main.go", "benchmark tools run by hand, not part of runall: each writes the one file its user names " +
		"on its command line (a generated sweep, a screenshot), as any command-line tool does"},
	{"examples/k8s/test/cluster/*.go", "the Kubernetes tests' cluster fixture (its own module, not runall): it writes its " +
		"daemons' configs in the temporary directory it made and, at teardown, removes that directory, the Pods' cgroups, " +
		"and the paths the kubelet and containerd make outside it whatever they are told, only those absent before it started"},
}

// pathCalls are the fenced functions by import path: what each does to the path it names,
// or "" for an open whose flags decide (flagArg is then where they are).
var pathCalls = map[string]map[string]string{
	"os": {"Remove": "removes", "RemoveAll": "removes a tree at", "Rename": "renames over",
		"Truncate": "truncates", "WriteFile": "truncates", "Create": "truncates", "OpenFile": ""},
	"io/ioutil": {"WriteFile": "truncates"},
	"syscall": {"Unlink": "removes", "Unlinkat": "removes", "Rmdir": "removes", "Rename": "renames over",
		"Renameat": "renames over", "Truncate": "truncates", "Open": "", "Openat": ""},
	"golang.org/x/sys/unix": {"Unlink": "removes", "Unlinkat": "removes", "Rmdir": "removes",
		"Rename": "renames over", "Renameat": "renames over", "Renameat2": "renames over",
		"Truncate": "truncates", "Open": "", "Openat": ""},
}

// flagArg is where an open's flags are among its arguments.
var flagArg = map[string]int{"OpenFile": 1, "Open": 1, "Openat": 2}

// fenceCall is a fenced call in a file: its line, its text and what it does.
type fenceCall struct {
	line int
	call string
	does string
}

// fenceCalls finds the fenced calls of f, whose source is src.
func fenceCalls(fset *token.FileSet, f *ast.File, src []byte) []fenceCall {
	pkgs := map[string]string{} // local name → import path, for the fenced packages
	var out []fenceCall
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := pathCalls[path]; !ok {
			continue
		}
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			out = append(out, fenceCall{line: fset.Position(imp.Pos()).Line, call: "import . " + imp.Path.Value,
				does: "hides which calls are fenced at"})
		}
		pkgs[name] = path
	}
	if len(pkgs) == 0 {
		return out
	}
	called := map[*ast.SelectorExpr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				called[sel] = true
				if does, ok := fenced(pkgs, sel, n); ok {
					out = append(out, fenceCall{fset.Position(n.Pos()).Line, text(fset, src, n), does})
				}
			}
		case *ast.SelectorExpr:
			if does, ok := fenced(pkgs, n, nil); ok && !called[n] {
				out = append(out, fenceCall{fset.Position(n.Pos()).Line, text(fset, src, n), does + " (as a value)"})
			}
		}
		return true
	})
	return out
}

// fenced tells whether sel, called as call (nil: used as a value), is a fenced function,
// and what it does.
func fenced(pkgs map[string]string, sel *ast.SelectorExpr, call *ast.CallExpr) (string, bool) {
	id, ok := sel.X.(*ast.Ident)
	if !ok || id.Obj != nil { // a local variable, not the package
		return "", false
	}
	path, ok := pkgs[id.Name]
	if !ok {
		return "", false
	}
	does, ok := pathCalls[path][sel.Sel.Name]
	if !ok || does != "" {
		return does, ok
	}
	i := flagArg[sel.Sel.Name]
	if call == nil || len(call.Args) <= i {
		return "opens with flags not written at the call", true
	}
	return openFlags(call.Args[i])
}

// openFlags tells what an open with the flags flag does that is fenced: O_TRUNC or
// O_APPEND in it, or something in it that is not a named O_ constant.
func openFlags(flag ast.Expr) (string, bool) {
	var does string
	ast.Inspect(flag, func(n ast.Node) bool {
		var name string
		switch n := n.(type) {
		case *ast.SelectorExpr:
			name = n.Sel.Name
		case *ast.Ident:
			name = n.Name
		case *ast.BinaryExpr, *ast.ParenExpr, *ast.BasicLit, nil:
			return true
		default:
			does = "opens with flags not written at the call"
			return false
		}
		switch {
		case name == "O_TRUNC":
			does = "truncates"
		case name == "O_APPEND" && does == "":
			does = "appends to"
		case !strings.HasPrefix(name, "O_") && does == "":
			does = "opens with flags not written at the call"
		}
		return false
	})
	return does, does != ""
}

// text is the source of n, cut short where it is long.
func text(fset *token.FileSet, src []byte, n ast.Node) string {
	s := string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// fenceAllows is the entry of fenceAllowed that rel matches, -1 for none.
func fenceAllows(rel string) int {
	for i, a := range fenceAllowed {
		if ok, _ := filepath.Match(a.glob, filepath.ToSlash(rel)); ok {
			return i
		}
	}
	return -1
}

// fenceReport says each fenced call of files outside fenceAllowed, and each entry of
// fenceAllowed that matched files but no fenced call.
func fenceReport(files []parsed, say func(format string, args ...any)) {
	matched := make([]bool, len(fenceAllowed))
	used := make([]bool, len(fenceAllowed))
	for _, f := range files {
		i := fenceAllows(f.rel)
		if i >= 0 {
			matched[i] = true
			used[i] = used[i] || len(f.fences) > 0
			continue
		}
		for _, c := range f.fences {
			say("%s:%d: %s %s a path outside the helpers that go through an os.Root (rule 1: delete or replace only what runall made, where it owns): "+
				"use internal/owned (owned.Open on a directory runall owns, owned.Temp for one it makes) or an *os.Root method",
				f.rel, c.line, c.call, c.does)
		}
	}
	for i, a := range fenceAllowed {
		if matched[i] && !used[i] {
			say("internal/limits: fenceAllowed lets %s make fenced calls, and none does any more: remove the entry", a.glob)
		}
	}
}
