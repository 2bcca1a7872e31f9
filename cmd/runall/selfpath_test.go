package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A binary not named runall (this test binary is runall.test) is put on PATH as runall
// through a link in a temporary directory of its own, which done removes, link and all,
// leaving the binary it pointed at.
func TestSelfOnPathLinkRemovedByDone(t *testing.T) {
	exe, err := os.Executable()
	if err != nil || filepath.Base(exe) == "runall" {
		t.Skipf("the test binary is %q (%v): no link is made", exe, err)
	}
	env, done := withSelfOnPath([]string{"PATH=" + t.TempDir()})
	path := env[0]
	dir := path[strings.LastIndexByte(path, filepath.ListSeparator)+1:]
	if got, err := os.Readlink(filepath.Join(dir, "runall")); err != nil || got != exe {
		t.Fatalf("PATH is %q; its runall links to %q (%v), want %s", path, got, err, exe)
	}
	done()
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("done left %s: %v", dir, err)
	}
	if _, err := os.Stat(exe); err != nil {
		t.Errorf("done removed the binary itself: %v", err)
	}
}
