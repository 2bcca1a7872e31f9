package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runall/runall/report"
	"github.com/runall/runall/runner/plan"
)

// TestRecordThatCannotBeWrittenFailsRun: results.json and report.html that cannot be written
// into the log directory are both tried, both errors said, and the run fails (it said both
// and exited 0): its record is incomplete.
func TestRecordThatCannotBeWrittenFailsRun(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "logs", "run1")
	for _, name := range []string{ResultsFile, ReportFile} {
		if err := os.MkdirAll(filepath.Join(runDir, name), 0o755); err != nil { // a directory in the file's place
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte("tasks:\n  - cmd: echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_, err = Run(p, Options{Output: OutputOptions{Stdout: &out}, Record: RecordOptions{LogDir: filepath.Join(dir, "logs"), RunID: "run1", Report: report.WriteRun}, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if !errors.Is(err, ErrIncompleteRecord) {
		t.Errorf("got %v, want ErrIncompleteRecord\n%s", err, out.String())
	}
	for _, want := range []string{"cannot write the results into the log directory", "cannot write the report"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q\n%s", want, out.String())
		}
	}
}
