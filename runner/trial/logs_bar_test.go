package trial

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// A bar's updates (pieces ending in \r) reach the task's log as the script drew them, one
// line redrawn, not a line each; a state handed on early and then ended by a newline is not
// written twice. The log that tasks share (log-path) gets the lines alone; the tails for the
// failure report keep a bar's newest state.
func TestLogKeepsBarsAsWritten(t *testing.T) {
	dir := t.TempDir()
	combined := filepath.Join(dir, "all.log")
	l, err := OpenLogs(dir, combined, func(_ *plan.Task, p string) (string, error) { return p, nil })
	if err != nil {
		t.Fatal(err)
	}
	task := &plan.Task{ID: 1, Name: "train"}
	tl, err := l.open(task, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	var tails tailBuffer
	for _, s := range []string{"start", " 10%| 1/10\r", " 50%| 5/10\r", "100%| 10/10", "eval 1/2\r", "eval 1/2", "done", "2/9\r"} {
		tl.Line(s)
		tails.add("stderr", s)
	}
	tl.Mark("attempt 1: killed") // the bar left mid-line: the mark starts a line
	tl.Close()
	l.Close()
	for path, want := range map[string]string{
		l.TaskLogPath(task): "start\n 10%| 1/10\r 50%| 5/10\r100%| 10/10\neval 1/2\r\ndone\n2/9\r\n== attempt 1: killed\n",
		combined:            "start\n100%| 10/10\neval 1/2\ndone\n",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("%s: %q, want %q", filepath.Base(path), b, want)
		}
	}
	if got, want := tails.lines("stderr"), []string{"start", "100%| 10/10", "eval 1/2", "done", "2/9"}; !slices.Equal(got, want) {
		t.Errorf("tails %q, want %q", got, want)
	}
}
