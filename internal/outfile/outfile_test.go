package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteWherePointed: a regular file and a missing path are replaced whole, a symlink
// (to a file not written yet too) is followed and stays, a directory is refused, and a FIFO
// no process reads is an error at once, as it is to OpenAppend.
func TestWriteWherePointed(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, link := range [][2]string{{"to-file", "file"}, {"to-missing", "sub/missing"}, {"to-link", "to-file"}} {
		if err := os.Symlink(link[1], p(link[0])); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, lands string }{
		{"file", "file"}, {"new", "new"}, {"to-file", "file"}, {"to-missing", "sub/missing"}, {"to-link", "file"},
	} {
		if err := WriteFile(p(tc.path), []byte(tc.path)); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if b, _ := os.ReadFile(p(tc.lands)); string(b) != tc.path {
			t.Errorf("%s: %s holds %q", tc.path, tc.lands, b)
		}
	}
	for _, link := range []string{"to-file", "to-missing", "to-link"} {
		if fi, err := os.Lstat(p(link)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink", link)
		}
	}
	if err := os.Mkdir(p("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p("dir"), nil); err == nil {
		t.Error("a directory was written")
	}
	if err := syscall.Mkfifo(p("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p("fifo"), []byte("x")); !errors.Is(err, ErrNoReader) {
		t.Errorf("a FIFO without a reader: %v", err)
	}
	if _, err := OpenAppend(p("fifo")); !errors.Is(err, ErrNoReader) {
		t.Errorf("OpenAppend, a FIFO without a reader: %v", err)
	}
	if fi, err := os.Lstat(p("fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
}
