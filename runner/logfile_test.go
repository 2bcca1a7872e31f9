package runner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// TestFullDiskIsSilent (issue: a full disk is silent): a task's log and config log-path on
// a full disk (/dev/full: every write fails with ENOSPC) are each reported once, in the
// output and the summary; the tasks' outcome stands and the run says its record is
// incomplete.
func TestFullDiskIsSilent(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	const id = "full-disk"
	if err := os.MkdirAll(filepath.Join(logDir, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", filepath.Join(logDir, id, "001-loud.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(`
config: {log-path: /dev/full}
tasks:
  - name: loud
    cmd: for i in 1 2 3; do echo line $i; done
  - name: after
    cmd: echo done > after.txt
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res, err := Run(p, Options{Environ: []string{"PATH=" + os.Getenv("PATH")}, Output: OutputOptions{Stdout: &buf}, Record: RecordOptions{RunID: id, LogDir: logDir}})
	out := buf.String()
	if !errors.Is(err, ErrIncompleteRecord) {
		t.Errorf("got %v, want ErrIncompleteRecord\n%s", err, out)
	}
	if res == nil {
		t.Fatal("no results")
	}
	for _, tr := range res.Tasks {
		if tr.Status != results.StatusOK {
			t.Errorf("task %s: %s, want ok", tr.Name, tr.Status)
		}
	}
	own := filepath.Join(logDir, id, "001-loud.log") + ": no space left on device"
	combined := "/dev/full: no space left on device"
	for _, want := range []string{own, combined} {
		if n := strings.Count(out, "could not write the log "+want); n != 1 {
			t.Errorf("%q reported %d times, want once:\n%s", want, n, out)
		}
		if !slices.Contains(res.LogErrors, want) {
			t.Errorf("results' log_errors %q lack %q", res.LogErrors, want)
		}
	}
	if !strings.Contains(out, "Logs not written in full (the record is incomplete):\n  "+own) {
		t.Errorf("the summary does not list the logs:\n%s", out)
	}
}

// TestLogPathThatCannotBeOpened: a task's log-path that cannot be opened (a file stands
// where its directory would be) is said, the task runs and keeps its outcome, and the run's
// record is incomplete (exit 1), as for a log that cannot be written.
func TestLogPathThatCannotBeOpened(t *testing.T) {
	res, out, err := runFile(t, `
tasks:
  - name: setup
    cmd: touch blocker
  - name: a
    cmd: echo hi
    log-path: blocker/a.log
`, Options{})
	if !errors.Is(err, ErrIncompleteRecord) {
		t.Errorf("got %v, want ErrIncompleteRecord\n%s", err, out)
	}
	if res == nil || len(res.Tasks) != 2 || res.Tasks[1].Status != results.StatusOK {
		t.Fatalf("results %+v, want a ok\n%s", res, out)
	}
	if len(res.LogErrors) != 1 || !strings.Contains(res.LogErrors[0], "blocker/a.log: not a directory") ||
		!strings.Contains(out, "cannot open log-path") {
		t.Errorf("log_errors %q; want the log-path, said in the output\n%s", res.LogErrors, out)
	}
}
