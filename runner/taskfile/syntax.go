package taskfile

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/runall/runall/internal/lazyre"
	"gopkg.in/yaml.v3"
)

var yamlLineRE = lazyre.New(`^yaml: line (\d+): (.*)$`)

// SyntaxProblem places a yaml.v3 parse error. yaml.v3 says only a line, and often the
// line where the enclosing block began rather than the one with the mistake (a bad key on
// line 4 of a mapping opened on line 1 says "line 1"). The mistake is where the parser
// first fails with the same message: the shortest prefix of the file that fails the same
// way ends there, so a search over prefixes finds its line, then its column.
func SyntaxProblem(file string, data []byte, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	reported := 0
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		reported, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	pos := Pos{File: file, Line: reported}
	if line, col, ok := locateSyntaxError(data, msg); ok {
		pos.Line, pos.Column = line, col
	}
	return Problem{pos, "yaml syntax error: " + msg}
}

// locateSyntaxError finds the line and column (1-based, in characters) at which parsing data
// first fails with msg. It parses O(log n) prefixes.
func locateSyntaxError(data []byte, msg string) (line, col int, ok bool) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(prefix []byte) bool {
		var n yaml.Node
		err := yaml.Unmarshal(prefix, &n)
		if err == nil {
			return false
		}
		got := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			got = m[2]
		}
		return got == msg
	}
	offsets := make([]int, len(lines)+1) // offsets[i]: where line i+1 starts
	for i, l := range lines {
		offsets[i+1] = offsets[i] + len(l)
	}
	// The smallest number of whole lines whose prefix fails the same way.
	k := sort.Search(len(lines)+1, func(k int) bool { return k > 0 && fails(data[:offsets[k]]) })
	if k == 0 || k > len(lines) {
		return 0, 0, false
	}
	text := bytes.TrimRight(lines[k-1], "\r\n")
	start := offsets[k-1]
	c := sort.Search(len(text)+1, func(c int) bool { return c > 0 && fails(data[:start+c]) })
	if c == 0 || c > len(text) {
		// Only the line's end shows the mistake: blame its first character that is not
		// indentation.
		c = len(text) - len(bytes.TrimLeft(text, " \t")) + 1
	}
	return k, utf8.RuneCount(text[:c-1]) + 1, true
}
