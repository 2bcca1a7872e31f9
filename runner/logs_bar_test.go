package runner

import (
	"os"
	"slices"
	"testing"

	"github.com/runall/runall/runner/plan"
)

// A bar's updates (pieces ending in \r) reach the log as the script wrote them, one line
// redrawn, not a line each; the tails for the failure report keep its newest state alone.
func TestLogKeepsBarsAsWritten(t *testing.T) {
	dir := t.TempDir()
	l, err := openLogs(dir, "", func(p string) string { return p })
	if err != nil {
		t.Fatal(err)
	}
	task := &plan.Task{ID: 1, Name: "train"}
	tl, err := l.open(task, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	var tails tailBuffer
	for _, s := range []string{"start", " 10%| 1/10\r", " 50%| 5/10\r", "100%| 10/10", "done"} {
		tl.line(s)
		tails.add("stderr", s)
	}
	tl.close()
	l.close()
	b, err := os.ReadFile(l.taskLogPath(task))
	if err != nil {
		t.Fatal(err)
	}
	if want := "start\n 10%| 1/10\r 50%| 5/10\r100%| 10/10\ndone\n"; string(b) != want {
		t.Errorf("log %q, want %q", b, want)
	}
	if got, want := tails.lines("stderr"), []string{"start", "100%| 10/10", "done"}; !slices.Equal(got, want) {
		t.Errorf("tails %q, want %q", got, want)
	}
}
