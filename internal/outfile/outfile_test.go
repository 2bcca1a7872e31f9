package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestOpenAppendOwnRefusesSymlink: a symlink put at a log runall owns is refused, naming
// it, and what it points to is not written; a regular file is appended to.
func TestOpenAppendOwnRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim, link := filepath.Join(dir, "victim"), filepath.Join(dir, "001-t.log")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenAppendOwn(link); err == nil || !strings.Contains(err.Error(), link+" is a symlink") {
		t.Errorf("got %v, want an error naming the symlink", err)
		if f != nil {
			f.Close()
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	f, err := OpenAppendOwn(filepath.Join(dir, "sub", "002-t.log"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
