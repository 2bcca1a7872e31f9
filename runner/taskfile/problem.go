package taskfile

import (
	"fmt"
	"strings"
)

// FileError is everything wrong with a task file: each problem with its place. Loading
// collects all of them so that one run of `runall check` shows every mistake.
type FileError struct {
	Problems []Problem
}

// Problem is one mistake in a task file.
type Problem struct {
	Pos Pos
	Msg string // lowercase; says what was expected
}

func (e *FileError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s", p.Pos, p.Msg)
	}
	return b.String()
}

// Pos is a place in a task file.
type Pos struct {
	File   string
	Line   int
	Column int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	if p.Column == 0 { // a YAML syntax error knows only its line
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}
