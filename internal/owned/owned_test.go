package owned

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// victims lays out a directory beside the owned one: vdir/f holding "keep", and inside the
// owned one a symlink "out" planted to point at vdir. It returns the owned Dir and vdir.
func victims(t *testing.T) (*Dir, string) {
	t.Helper()
	base := t.TempDir()
	vdir := filepath.Join(base, "vdir")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vdir, "f"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(filepath.Join(base, "own"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := os.Symlink(vdir, d.Join("out")); err != nil {
		t.Fatal(err)
	}
	return d, vdir
}

// untouched fails t unless vdir still holds f with "keep", and nothing else.
func untouched(t *testing.T, vdir, what string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vdir, "f"))
	if err != nil || string(b) != "keep" {
		t.Errorf("%s: the victim is %q, %v: want it kept", what, b, err)
	}
	ents, _ := os.ReadDir(vdir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"f"}) {
		t.Errorf("%s: the victim's directory holds %q, want only f", what, names)
	}
}

// Every operation of a Dir refuses a name that leaves it, by "..", as an absolute path or
// through a symlink planted inside it, and leaves what is outside as it was.
func TestDirRefusesNamesThatLeave(t *testing.T) {
	ops := map[string]func(d *Dir, name string) error{
		"Remove":    func(d *Dir, name string) error { return d.Remove(name) },
		"RemoveAll": func(d *Dir, name string) error { return d.RemoveAll(name) },
		"Rename from": func(d *Dir, name string) error {
			return d.Rename(name, "got")
		},
		"Rename to": func(d *Dir, name string) error {
			os.WriteFile(d.Join("mine"), []byte("mine"), 0o644)
			return d.Rename("mine", name)
		},
		"WriteFile": func(d *Dir, name string) error { return d.WriteFile(name, []byte("x"), 0o644) },
		"OpenAppend": func(d *Dir, name string) error {
			f, err := d.OpenAppend(name)
			if err == nil {
				f.WriteString("appended")
				f.Close()
			}
			return err
		},
		"Symlink":  func(d *Dir, name string) error { return d.Symlink("anywhere", name) },
		"MkdirAll": func(d *Dir, name string) error { return d.MkdirAll(name + "-dir/sub") },
	}
	for op, do := range ops {
		for _, leave := range []string{"dotdot", "absolute", "symlink"} {
			t.Run(op+"/"+leave, func(t *testing.T) {
				d, vdir := victims(t)
				name := map[string]string{
					"dotdot":   "../vdir/f",
					"absolute": filepath.Join(vdir, "f"),
					"symlink":  "out/f",
				}[leave]
				if err := do(d, name); err == nil {
					t.Errorf("%s(%q) = nil, want an error: the name leaves %s", op, name, d.Path())
				}
				untouched(t, vdir, op+"("+name+")")
			})
		}
	}
}

// RemoveAll refuses the directory itself: a Dir is emptied name by name, never whole.
func TestRemoveAllRefusesItself(t *testing.T) {
	d, _ := victims(t)
	if err := d.WriteFile("kept", []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".", "", "out/..", "./"} {
		if err := d.RemoveAll(name); err == nil {
			t.Errorf("RemoveAll(%q) = nil, want an error", name)
		}
	}
	if _, err := os.Stat(d.Join("kept")); err != nil {
		t.Errorf("the directory's file is gone: %v", err)
	}
}

// Close removes a Temp directory with what is in it, and a symlink planted in it is removed,
// not followed; Close of a Dir from Open removes nothing.
func TestTempCloseRemovesOnlyItself(t *testing.T) {
	_, vdir := victims(t)
	d, err := Temp("owned-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MkdirAll("a/b"); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("a/b/c", []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(vdir, d.Join("a/link")); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(d.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary directory is still there: %v", err)
	}
	untouched(t, vdir, "Close")

	dir := filepath.Join(t.TempDir(), "open")
	o, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Close of an opened directory removed it: %v", err)
	}
}

// Replace writes the whole file with its mode and leaves no temporary file; a write that
// fails keeps the old file; a symlink at the name is replaced, not written through.
func TestReplace(t *testing.T) {
	d, vdir := victims(t)
	if err := d.WriteFile("r", []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := d.Replace("r", 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Replace = %v, want the write's error", err)
	}
	if b, _ := os.ReadFile(d.Join("r")); string(b) != "old" {
		t.Errorf("after a failed write the file holds %q, want old", b)
	}
	if err := d.WriteFile("r", []byte("new"), 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(d.Join("r"))
	if b, _ := os.ReadFile(d.Join("r")); err != nil || string(b) != "new" || fi.Mode().Perm() != 0o755 {
		t.Errorf("the file holds %q with mode %v (%v), want new with 0755", b, fi.Mode(), err)
	}
	if err := os.Symlink(filepath.Join(vdir, "f"), d.Join("link")); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("link", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	untouched(t, vdir, "WriteFile over a symlink")
	ents, _ := os.ReadDir(d.Path())
	for _, e := range ents {
		if e.Name() != "r" && e.Name() != "link" && e.Name() != "out" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// Symlink replaces what the name was, as <logDir>/latest is pointed at each new run.
func TestSymlinkReplaces(t *testing.T) {
	d, _ := victims(t)
	for _, target := range []string{"run1", "run2"} {
		if err := d.Symlink(target, "latest"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.Readlink(d.Join("latest")); err != nil || got != "run2" {
		t.Errorf("latest -> %q (%v), want run2", got, err)
	}
}
