package main

import (
	"fmt"
	"io"
	"path/filepath"
)

// headroom is how close to a limit a type or function must stand to be listed by near: at
// the limit, or one below it.
const headroom = 1

// near lists to w the types and functions under root that stand within headroom of a limit
// (fields, methods, lines), and says nothing when none does. It is a warning, not a
// failure: it shows the next change where the room is full before it overflows.
func near(root string, w io.Writer) error {
	files, err := goFiles(root)
	if err != nil {
		return err
	}
	var all []parsed
	var lines []string
	for _, path := range files {
		f, err := parse(path)
		if err != nil {
			return err
		}
		f.rel, _ = filepath.Rel(root, path)
		all = append(all, f)
		for _, fn := range f.funcs {
			if within(fn.lines, maxFuncLines) {
				lines = append(lines, fmt.Sprintf("%s:%d: func %s is %d lines (limit %d)", f.rel, fn.line, fn.name, fn.lines, maxFuncLines))
			}
		}
	}
	for _, t := range typeSizes(all) {
		if within(t.methods, maxTypeMethods) {
			lines = append(lines, fmt.Sprintf("%s:%d: type %s has %d methods (limit %d)", t.file, t.line, t.name, t.methods, maxTypeMethods))
		}
		if t.flat == "" && within(t.fields, maxTypeFields) {
			lines = append(lines, fmt.Sprintf("%s:%d: type %s has %d fields (limit %d)", t.file, t.line, t.name, t.fields, maxTypeFields))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintf(w, "limits: %d within %d of a limit (a warning, not a failure: the next change there makes room first):\n", len(lines), headroom)
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	return nil
}

// within reports whether n stands at limit or less than headroom below it.
func within(n, limit int) bool { return n <= limit && n >= limit-headroom }
