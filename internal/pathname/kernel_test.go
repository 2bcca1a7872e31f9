package pathname

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealTakesDotDotAfterLinks: under a working directory that is a link, ../sub is the
// link's target's sibling, as a process there would reach it, not the link's.
func TestRealTakesDotDotAfterLinks(t *testing.T) {
	base := t.TempDir()
	deep := filepath.Join(base, "real", "deep")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(deep, link); err != nil {
		t.Fatal(err)
	}
	if got, want := Real(Join(link, "../sub")), filepath.Join(base, "real", "sub"); got != want {
		t.Errorf("Real(%s/../sub) = %s, want %s", link, got, want)
	}
	if got, want := NoFollow(link), link; got != want {
		t.Errorf("NoFollow(%s) = %s, want the link itself", link, got)
	}
	if got := Real(link); got != deep {
		t.Errorf("Real(%s) = %s, want %s", link, got, deep)
	}
	t.Chdir(link)
	if got, want := Real("../sub"), filepath.Join(base, "real", "sub"); got != want {
		t.Errorf("in %s, Real(../sub) = %s, want %s", link, got, want)
	}
}

// TestSame: two names of one file are the same (a link to it, a path through a link to its
// folder); a file and a missing name are compared by where they resolve.
func TestSame(t *testing.T) {
	base := t.TempDir()
	f := filepath.Join(base, "d", "t.yml")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(f, filepath.Join(base, "l.yml"))
	os.Symlink(filepath.Join(base, "d"), filepath.Join(base, "dl"))
	os.Link(f, filepath.Join(base, "hard.yml"))
	for _, other := range []string{"l.yml", "dl/t.yml", "dl/../d/t.yml", "hard.yml"} {
		if !Same(f, filepath.Join(base, other)) {
			t.Errorf("%s is not the same as %s", other, f)
		}
	}
	if Same(f, filepath.Join(base, "d", "other.yml")) {
		t.Error("a missing file is the same as t.yml")
	}
	if !Same(filepath.Join(base, "dl", "new"), filepath.Join(base, "d", "new")) {
		t.Error("dl/new and d/new, both missing, are not the same place")
	}
}

// TestClean: a path with no ".." is cleaned as its text says; one with a ".." has it taken
// after the link before it.
func TestClean(t *testing.T) {
	base := t.TempDir()
	deep := filepath.Join(base, "real", "deep")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		base + "/link/./x//y":   base + "/link/x/y",
		base + "/link/../sub":   base + "/real/sub",
		base + "/link/a/../b":   base + "/real/deep/b",
		Join(base+"/link", "c"): base + "/link/c",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%s) = %s, want %s", in, got, want)
		}
	}
}
