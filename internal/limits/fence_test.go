package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fenceTree writes files (path → source) under a new root and returns what check says.
func fenceTree(t *testing.T, files map[string]string) (int, []string) {
	t.Helper()
	root := t.TempDir()
	for rel, src := range files {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	n, err := check(root, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	lines := slices.Collect(strings.Lines(out.String()))
	slices.Sort(lines)
	return n, lines
}

// A removal outside the helpers fails the check, named with its place, the call and the
// fix; the same call in an allowed helper's file passes (not in a file beside it), as do a
// method of an *os.Root and a test.
func TestFenceNamesRemovalOutsideHelpers(t *testing.T) {
	src := "package p\n\nimport \"os\"\n\nfunc wipe(dir string) error {\n\treturn os.RemoveAll(dir)\n}\n"
	root := "package p\n\nimport \"os\"\n\nfunc wipe(r *os.Root, name string) error {\n\treturn r.RemoveAll(name)\n}\n"
	n, lines := fenceTree(t, map[string]string{
		"runner/p/wipe.go":           src,
		"runner/p/wipe_test.go":      src,
		"internal/outfile/append.go": strings.Replace(src, "package p", "package outfile", 1),
		"internal/outfile/wipe.go":   strings.Replace(src, "package p", "package outfile", 1),
		"runner/p/root.go":           root,
	})
	if n != 2 || len(lines) != 2 {
		t.Fatalf("%d offenders, want 2:\n%s", n, strings.Join(lines, ""))
	}
	for i, place := range []string{"internal/outfile/wipe.go:6:", "runner/p/wipe.go:6:"} {
		for _, want := range []string{place + " os.RemoveAll(dir) removes a tree at a path", "internal/owned", "*os.Root"} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("the offender is said as\n%s\nwant it to hold %q", lines[i], want)
			}
		}
	}
}

// Each fenced call is named, however the package is imported and whether it is called or
// taken as a value; an open is fenced by what its flags do, and an open that only creates,
// reads or writes in place, a creation and a method of the same name on another value pass.
func TestFenceCalls(t *testing.T) {
	body := `package p

import (
	goos "os"
	"io/ioutil"
	"syscall"
	"golang.org/x/sys/unix"
)

func f(flag int, r *goos.Root, os struct{ Remove func(string) error }) {
	goos.Remove("a")
	goos.Rename("a", "b")
	goos.Truncate("a", 0)
	goos.WriteFile("a", nil, 0)
	goos.Create("a")
	goos.OpenFile("a", goos.O_WRONLY|goos.O_TRUNC, 0)
	goos.OpenFile("a", goos.O_CREATE|goos.O_APPEND|goos.O_WRONLY, 0)
	goos.OpenFile("a", flag, 0)
	rm := goos.RemoveAll
	ioutil.WriteFile("a", nil, 0)
	syscall.Unlink("a")
	unix.Renameat(0, "a", 0, "b")
	unix.Openat(0, "a", unix.O_RDWR|unix.O_TRUNC, 0)
	goos.OpenFile("a", goos.O_RDWR|goos.O_CREATE|goos.O_EXCL|syscall.O_NONBLOCK, 0)
	goos.OpenFile("a", goos.O_RDONLY, 0)
	goos.MkdirAll("a", 0)
	goos.CreateTemp("", "x")
	r.Remove("a")
	r.OpenFile("a", goos.O_TRUNC, 0)
	os.Remove("a")
	_ = rm
}
`
	n, lines := fenceTree(t, map[string]string{"p/p.go": body})
	var got []string
	for _, l := range lines {
		place, rest, _ := strings.Cut(l, " a path outside")
		_ = rest
		got = append(got, place)
	}
	want := []string{
		"p/p.go:11: goos.Remove(\"a\") removes",
		"p/p.go:12: goos.Rename(\"a\", \"b\") renames over",
		"p/p.go:13: goos.Truncate(\"a\", 0) truncates",
		"p/p.go:14: goos.WriteFile(\"a\", nil, 0) truncates",
		"p/p.go:15: goos.Create(\"a\") truncates",
		"p/p.go:16: goos.OpenFile(\"a\", goos.O_WRONLY|goos.O_TRUNC, 0) truncates",
		"p/p.go:17: goos.OpenFile(\"a\", goos.O_CREATE|goos.O_APPEND|goos.O_WRONLY, 0) appends to",
		"p/p.go:18: goos.OpenFile(\"a\", flag, 0) opens with flags not written at the call",
		"p/p.go:19: goos.RemoveAll removes a tree at (as a value)",
		"p/p.go:20: ioutil.WriteFile(\"a\", nil, 0) truncates",
		"p/p.go:21: syscall.Unlink(\"a\") removes",
		"p/p.go:22: unix.Renameat(0, \"a\", 0, \"b\") renames over",
		"p/p.go:23: unix.Openat(0, \"a\", unix.O_RDWR|unix.O_TRUNC, 0) truncates",
	}
	slices.Sort(want)
	if n != len(want) || !slices.Equal(got, want) {
		t.Errorf("%d offenders:\n%s\nwant\n%s", n, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An allowance that matches files none of which makes a fenced call any more is named, so
// that the list of helpers only shrinks.
func TestFenceNamesStaleAllowance(t *testing.T) {
	n, lines := fenceTree(t, map[string]string{
		"internal/outfile/append.go": "package outfile\n\nfunc f(r interface{ RemoveAll(string) error }) { r.RemoveAll(\"x\") }\n",
	})
	if n != 1 || !strings.Contains(lines[0], "internal/outfile/append.go") || !strings.Contains(lines[0], "remove the entry") {
		t.Errorf("%d offenders:\n%s\nwant internal/outfile/append.go's allowance named as unused", n, strings.Join(lines, ""))
	}
}

// The module itself keeps within the fence: its removals, renames, truncations and appends
// go through internal/owned, *os.Root methods or the helpers fenceAllowed lists.
func TestFenceHoldsOnTheModule(t *testing.T) {
	var out strings.Builder
	if _, err := check(filepath.Join("..", ".."), &out, false); err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(out.String()) {
		if strings.Contains(l, "os.Root") || strings.Contains(l, "fenceAllowed") {
			t.Errorf("fence: %s", l)
		}
	}
}
