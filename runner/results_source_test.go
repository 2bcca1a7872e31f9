package runner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/plan"
)

// TestResultsOverTaskFileRefusedByRun (issue 42, point 1, third bullet): Run itself (not only
// the CLI) refuses a ResultsFile that reaches the task file, here through a link to its
// directory, before any task runs, and leaves the task file as it was.
func TestResultsOverTaskFileRefusedByRun(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	content := "tasks:\n  - cmd: touch " + ran + "\n"
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "there")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(p, Options{Record: RecordOptions{LogDir: filepath.Join(dir, "logs"), ResultsFile: filepath.Join(link, "tasks.yml")}})
	if !errors.Is(err, outfile.ErrIsSource) {
		t.Errorf("got %v, want outfile.ErrIsSource", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the task ran")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "tasks.yml")); string(b) != content {
		t.Errorf("the task file holds %q", b)
	}
}
