package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fields is a struct body of n fields.
func fields(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("\tf" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " int\n")
	}
	return b.String()
}

// methods declares n methods on typ.
func methods(typ string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("func (x *" + typ + ") m" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "() {}\n")
	}
	return b.String()
}

// Each limit names its offender with its place; what keeps within the limits, a flat record
// that says why, a type with no method and a test file are no offenders.
func TestLimits(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := "package p\n" + strings.Repeat("// filler\n", 400)
	write("p/long.go", long)
	write("p/long_test.go", long) // tests are not checked
	write("p/fn.go", "package p\n\nfunc big() {\n"+strings.Repeat("\t_ = 1\n", 59)+"}\n\nfunc fits() {\n"+strings.Repeat("\t_ = 1\n", 58)+"}\n")
	write("runner/x/types.go", "package x\n\ntype wide struct {\n"+fields(13)+"}\n\n"+methods("wide", 1)+
		"\ntype record struct {\n"+fields(20)+"}\n"+
		"\n// flat says why it is.\n//\n//limits:flat a row of a file format\ntype flat struct {\n"+fields(20)+"}\n\n"+methods("flat", 1)+
		"\ntype busy struct{ part }\n\ntype part struct{ a int }\n\n"+methods("part", 16))
	write("elsewhere/wide.go", "package elsewhere\n\ntype wide struct {\n"+fields(13)+"}\n\n"+methods("wide", 1))
	var out strings.Builder
	n, err := check(root, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for l := range strings.Lines(out.String()) {
		head, _, _ := strings.Cut(l, ": ")
		got = append(got, head+": "+strings.Fields(l)[1]+" "+strings.Fields(l)[2])
	}
	want := []string{
		"p/fn.go:3: func big",
		"p/long.go: 401 lines,",
		"runner/x/types.go:3: type x.wide",
		"runner/x/types.go:72: type x.busy",
		"runner/x/types.go:74: type x.part",
	}
	slices.Sort(got)
	if n != len(want) || !slices.Equal(got, want) {
		t.Errorf("%d offenders:\n%s\nwant %q", n, out.String(), want)
	}
}
