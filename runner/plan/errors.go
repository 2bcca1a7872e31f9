package plan

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
