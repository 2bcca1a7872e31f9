package pathname

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLinksRefused: a link set is judged as the kernel will resolve it once all its links
// are made, not link by link by its text.
func TestLinksRefused(t *testing.T) {
	tests := []struct {
		name  string
		links Links
		want  map[string]string
	}{
		{"inside", Links{"last.ckpt": "epoch=3.ckpt", "sub/up": "../epoch=3.ckpt", "a": "."}, map[string]string{}},
		{"a chain of links to links", Links{"best": "latest", "latest": "sub/l", "sub/l": "../e.ckpt"}, map[string]string{}},
		{"a name through an earlier link (issue 42)", Links{"a": ".", "a/a/a/step": "../../../victim/file.txt"},
			map[string]string{"a/a/a/step": "its name goes through the link a"}},
		{"a target through a link, then up", Links{"a": ".", "b": "a/.."}, map[string]string{"b": "its target leaves the directory"}},
		{"a target through a deeper link", Links{"d": "x/y", "e": "d/../../.."}, map[string]string{"e": "its target leaves the directory"}},
		{"a link to a link that leaves", Links{"up": "..", "via": "up"}, map[string]string{"up": "its target leaves the directory"}}, // via then names a missing up
		{"up by text", Links{"x": "../y"}, map[string]string{"x": "its target leaves the directory"}},
		{"absolute", Links{"x": "/etc/passwd"}, map[string]string{"x": "its target is an absolute path"}},
		{"a name that leaves", Links{"../x": "y"}, map[string]string{"../x": "its name leaves the directory"}},
		{"a loop", Links{"p": "q", "q": "p"}, map[string]string{"p": "its target is a loop of links"}}, // q then names a missing p
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.links.Refused()
			if !maps.Equal(got, tc.want) {
				t.Errorf("refused %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLinksAsTheKernelMakesThem makes each set of links that Refused keeps, in a directory,
// and checks that every one of them resolves inside it; each one it refuses is shown to
// resolve outside (victims in a temporary directory).
func TestLinksAsTheKernelMakesThem(t *testing.T) {
	sets := []Links{
		{"a": ".", "a/a/a/step": "../../../victim/file.txt"},
		{"a": ".", "b": "a/.."},
		{"d": "x/y", "e": "d/../../.."},
		{"last.ckpt": "epoch=3.ckpt", "sub/up": "../epoch=3.ckpt", "a": "."},
	}
	for _, links := range sets {
		top := filepath.Join(t.TempDir(), "top")
		if err := os.MkdirAll(filepath.Join(top, "x", "y"), 0o755); err != nil {
			t.Fatal(err)
		}
		refused := links.Refused()
		for _, name := range slices.Sorted(maps.Keys(links)) { // made as written, as an unchecked restore would
			target := links[name]
			p := filepath.Join(top, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}
		for name := range links {
			at := Real(filepath.Join(top, filepath.FromSlash(name)))
			inside := Within(at, Real(top))
			if _, bad := refused[name]; bad == inside {
				t.Errorf("%v: %s reaches %s (inside %v), refused %v", links, name, at, inside, bad)
			}
		}
	}
}
