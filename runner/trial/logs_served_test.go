package trial

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// TestServedLogIsTheOneOpened walks every way a trial's log path can name another file than
// the one runall opened there: a symlink put there before runall opened it (which runall
// appends through, as it does for a log-path), a symlink or another file put there since, and
// a path runall never opened. Only the file runall opened is served.
func TestServedLogIsTheOneOpened(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("the secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLogs(filepath.Join(dir, "run"), "", func(_ *plan.Task, p string) (string, error) { return p, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	warn := func(string) {}
	open := func(id int, name string) string {
		task := &plan.Task{ID: id, Name: name}
		tl, err := l.open(task, warn)
		if err != nil {
			t.Fatal(err)
		}
		tl.Line("own line")
		tl.Close()
		return l.TaskLogPath(task)
	}
	served := func(path string) (string, error) {
		f, err := l.OpenServed(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		return string(b), nil
	}

	good := open(1, "good")
	if got, err := served(good); err != nil || got != "own line\n" {
		t.Fatalf("the log runall opened: %q, %v", got, err)
	}
	before := l.TaskLogPath(&plan.Task{ID: 2, Name: "before"})
	if err := os.Symlink(secret, before); err != nil {
		t.Fatal(err)
	}
	open(2, "before")
	for what, put := range map[string]func() error{
		"a symlink since":    func() error { return os.Symlink(secret, good) },
		"another file since": func() error { return os.WriteFile(good, []byte("the secret\n"), 0o644) },
	} {
		if err := os.Remove(good); err != nil {
			t.Fatal(err)
		}
		if err := put(); err != nil {
			t.Fatal(err)
		}
		if got, err := served(good); err == nil || strings.Contains(got, "secret") {
			t.Errorf("%s: served %q, want an error", what, got)
		}
	}
	for _, path := range []string{before, filepath.Join(dir, "run", "009-never.log"), secret} {
		if got, err := served(path); err == nil || strings.Contains(got, "secret") {
			t.Errorf("%s: served %q, want an error", path, got)
		}
	}
}

// TestServedLogWithLogPathNotedClosed: a task with log-path: had its own log noted, as it
// was closed, under its log-path's name (the path variable was reused for it), so its own
// log stayed noted as open (a file put in its place since with its inode number would be
// served) and the log-path file was noted as a served log it is not.
func TestServedLogWithLogPathNotedClosed(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLogs(filepath.Join(dir, "run"), "", func(_ *plan.Task, p string) (string, error) { return p, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	task := &plan.Task{ID: 1, Name: "t", LogPath: filepath.Join(dir, "extra.log")}
	tl, err := l.open(task, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	tl.Line("own line")
	tl.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.opened[l.TaskLogPath(task)]; !ok || !s.closed {
		t.Errorf("the task's own log noted %+v (%v), want noted as closed", s, ok)
	}
	if _, ok := l.opened[task.LogPath]; ok {
		t.Error("the log-path file is noted as a served log")
	}
}
