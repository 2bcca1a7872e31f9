package main

import (
	"fmt"
	"io"
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

// Each limit names its offender with its place, in any package; what keeps within the
// limits, a flat record that says why and a test file are no offenders. A record with no
// method has the field limit too (event.Event and plan.Config grew to 25 fields unseen).
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
		"elsewhere/wide.go:3: type elsewhere.wide",
		"runner/x/types.go:21: type x.record",
		"runner/x/types.go:3: type x.wide",
		"runner/x/types.go:72: type x.busy",
		"runner/x/types.go:74: type x.part",
	}
	slices.Sort(got)
	slices.Sort(want)
	if n != len(want) || !slices.Equal(got, want) {
		t.Errorf("%d offenders:\n%s\nwant %q", n, out.String(), want)
	}
}

// near lists what stands at a limit or one below it, and nothing further off, nor the fields
// of a flat record; it fails nothing.
func TestNear(t *testing.T) {
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
	fn := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 1\n", lines-2) + "}\n\n"
	}
	write("a/fn.go", "package a\n\n"+fn("at", 60)+fn("below", 59)+fn("room", 58))
	write("b/types.go", "package b\n\ntype full struct{ a int }\n\n"+methods("full", 15)+
		"\ntype nearly struct{ a int }\n\n"+methods("nearly", 14)+
		"\ntype roomy struct{ a int }\n\n"+methods("roomy", 13)+
		"\ntype wide struct {\n"+fields(12)+"}\n"+
		"\ntype nearwide struct {\n"+fields(11)+"}\n"+
		"\ntype narrow struct {\n"+fields(10)+"}\n"+
		"\n//limits:flat a row of a file format\ntype flat struct {\n"+fields(12)+"}\n")
	write("b/types_test.go", "package b\n\ntype inTest struct {\n"+fields(12)+"}\n")
	var out strings.Builder
	if err := near(root, &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for l := range strings.Lines(out.String()) {
		if f := strings.Fields(l); strings.HasPrefix(l, "  ") && len(f) >= 3 {
			got = append(got, f[1]+" "+f[2]+" "+f[4])
		}
	}
	want := []string{
		"func at 60", "func below 59",
		"type b.full 15", "type b.nearly 14", "type b.nearwide 11", "type b.wide 12",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("near lists:\n%s\nwant %q", out.String(), want)
	}
	if n, err := check(root, io.Discard, false); err != nil || n != 0 {
		t.Errorf("check found %d offenders (%v) where all keep within the limits", n, err)
	}
}

// TestFences: a fence names every dependency off its list (another module's packages once
// per module), an entry on its list that names nothing it depends on, a count over its
// limit, and an import of what it may reach only through another; the package itself needs
// no entry. The real module keeps within every fence, and within the layers' limit, with
// every package on a layer.
func TestFences(t *testing.T) {
	f := fence{pkg: "runner/x", limit: 4, may: []string{"runner/plan", "runner/gone", "gopkg.in/yaml.v3", "s3sync"}, indirect: []string{"s3sync"}}
	deps := []string{module + "runner/x", module + "runner/plan", "gopkg.in/yaml.v3", module + "s3sync",
		module + "runner/sharing", "github.com/aws/smithy-go/a", "github.com/aws/smithy-go/b"}
	got := f.offenders(deps, []string{module + "runner/plan", module + "s3sync"})
	want := []string{
		"7 dependencies outside the standard library, more than 4",
		"depends on github.com/runall/runall/runner/sharing (go list -deps ./runner/x), which its fence does not allow",
		"depends on 2 packages under github.com/aws/smithy-go (github.com/aws/smithy-go/a among them) (go list -deps ./runner/x), which its fence does not allow",
		"its fence allows runner/gone, on which it no longer depends: strike it",
		"imports github.com/runall/runall/s3sync itself, which it may reach only through another package",
	}
	if !slices.Equal(got, want) {
		t.Errorf("offenders:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := f.offenders(deps[:4], []string{module + "runner/plan"}); len(got) != 1 || !strings.Contains(got[0], "runner/gone") {
		t.Errorf("offenders of a package within its fence but for one stale entry: %q", got)
	}
	var out strings.Builder
	n := 0
	say := func(format string, args ...any) {
		fmt.Fprintf(&out, format+"\n", args...)
		n++
	}
	if err := dependencyReport("../..", &out, say); err != nil {
		t.Fatal(err)
	}
	if err := layerReport("../..", &out, say); err != nil {
		t.Fatal(err)
	}
	if err := rootFileReport("../..", &out, say); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		t.Errorf("the module breaks %d fences or layers:\n%s", n, out.String())
	}
}

// A package stands on the layer of its exact path, else of the longest "/..." above it; a
// package outside the module stands on none.
func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]string{
		"cmd/runall": "cmd", "live": "cmd", "runner": "runner's root", "runner/admit": "policy", "report": "policy",
		"runner/results": "records and grammar", "runner/proc": "leaves", "gpu/mps": "leaves", "internal/owned": "leaves",
	} {
		if i, ok := layerOf(module + pkg); !ok || layers[i].name != want {
			t.Errorf("%s stands on %q (%v), want %q", pkg, layers[i].name, ok, want)
		}
	}
	if _, ok := layerOf("gopkg.in/yaml.v3"); ok {
		t.Error("a package outside the module stands on a layer")
	}
}

// An arrow climbs when what it reaches stands on a layer above its own; within a layer and
// down is the flow, and an arrow with an end on no layer is not counted. A use of a name
// another file declares is found by its declaration, not its spelling.
func TestClimbing(t *testing.T) {
	table := []layer{{"top", []string{"a.go"}}, {"middle", []string{"b.go", "c.go"}}, {"bottom", []string{"d.go"}}}
	on := func(f string) (int, bool) {
		i := slices.IndexFunc(table, func(l layer) bool { return slices.Contains(l.members, f) })
		return i, i >= 0
	}
	got := climbing([]arrow{{"a.go", "d.go", "uses x of"}, {"b.go", "c.go", "uses y of"}, {"c.go", "b.go", "uses z of"},
		{"d.go", "b.go", "uses w of"}, {"b.go", "a.go", "uses v of"}, {"e.go", "a.go", "uses u of"}, {"d.go", "e.go", "uses t of"}}, table, on)
	want := []string{"d.go (bottom) uses w of b.go (middle)", "b.go (middle) uses v of a.go (top)"}
	if !slices.Equal(got, want) {
		t.Errorf("climbing: %q, want %q", got, want)
	}
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go": "package p\n\ntype T struct{ f int }\n\nfunc (T) M() {}\n",
		"b.go": "package p\n\nfunc g(t T) int { t.M(); return t.f }\n\nfunc M() {}\n",
		"c.go": "package p\n\nfunc h() { M() }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arrows, files, err := fileArrows(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantArrows := []arrow{{"b.go", "a.go", "uses M, T, f of"}, {"c.go", "b.go", "uses M of"}}
	if !slices.Equal(arrows, wantArrows) || !slices.Equal(files, []string{"a.go", "b.go", "c.go"}) {
		t.Errorf("fileArrows: %q %q, want %q", arrows, files, wantArrows)
	}
}
