package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDirFollowsLinks (issue 42, point 1, third bullet): the "creates no directory you
// named" rule judges the directory a write reaches: a dangling link whose target's directory
// does not exist is refused (its write would have made it), and a ".." after a link is taken
// where the link leads; a link into a directory that exists is let through.
func TestCheckDirFollowsLinks(t *testing.T) {
	base := t.TempDir()
	elsewhere := filepath.Join(base, "elsewhere", "deep")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return base + "/" + name } // not filepath.Join: it would take the .. by the text
	for link, target := range map[string]string{
		"dangling": p("missing/dir/r.json"), // Write would make missing/dir
		"rel":      "missing/r.json",
		"chain":    "dangling",
		"fine":     p("elsewhere/r.json"),
		"deep":     elsewhere,
	} {
		if err := os.Symlink(target, p(link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"dangling", false}, {"rel", false}, {"chain", false}, {"fine", true},
		{"deep/../r.json", true},             // base/elsewhere/r.json
		{"deep/../../missing/r.json", false}, // base/missing/r.json: base/missing is not there
		{"deep/../nope/r.json", false},       // base/elsewhere/nope: not there, though base/nope reads as it
	} {
		err := CheckDir(p(tc.path))
		if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, ErrNoDir) {
			t.Errorf("CheckDir(%s) = %v, want ok %v", tc.path, err, tc.ok)
		}
	}
	if err := os.MkdirAll(p("nope"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(p("deep/../nope/r.json")); !errors.Is(err, ErrNoDir) || !strings.Contains(err.Error(), "it leads to "+filepath.Join(base, "elsewhere", "nope", "r.json")) {
		t.Errorf("CheckDir(deep/../nope/r.json) with base/nope there: %v, want it refused, saying where it leads", err)
	}
	if err := WriteFile(p("fine"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p("missing")); err == nil {
		t.Error("a directory was made")
	}
}

// TestCheckWriteRefusesSources (issue 42, point 1, third bullet): a destination that
// reaches a source (through a link, a hard link, a ".." after a link) is refused; one that
// reads like the source but reaches elsewhere is not.
func TestCheckWriteRefusesSources(t *testing.T) {
	base := t.TempDir()
	p := func(name string) string { return base + "/" + name } // not filepath.Join: it would take the .. by the text
	if err := os.MkdirAll(p("real/deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := p("t.yml")
	if err := os.WriteFile(src, []byte("tasks: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(src, p("l.yml"))
	os.Symlink(p("real/deep"), p("deep"))
	os.Link(src, p("hard.yml"))
	os.Symlink(".", p("here"))
	for _, dst := range []string{"t.yml", "l.yml", "hard.yml", "here/t.yml", "deep/../../t.yml"} {
		if err := CheckWrite(p(dst), src); !errors.Is(err, ErrIsSource) {
			t.Errorf("CheckWrite(%s, t.yml) = %v, want ErrIsSource", dst, err)
		}
	}
	for _, dst := range []string{"deep/../t.yml", "u.yml"} { // real/t.yml; another file
		if err := CheckWrite(p(dst), src); err != nil {
			t.Errorf("CheckWrite(%s, t.yml) = %v, want ok", dst, err)
		}
	}
	if b, _ := os.ReadFile(src); string(b) != "tasks: []\n" {
		t.Errorf("the source holds %q", b)
	}
}
