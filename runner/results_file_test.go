package runner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/runall/runall/internal/outfile"
)

// TestResultsInMissingDirRefusedByRun: Run itself (not only the CLI) refuses a ResultsFile
// whose directory does not exist, before any task runs, and creates no directory.
func TestResultsInMissingDirRefusedByRun(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	_, _, err := runFile(t, "tasks:\n  - cmd: touch "+ran+"\n", Options{Record: RecordOptions{ResultsFile: filepath.Join(dir, "no", "such", "r.json")}})
	if !errors.Is(err, outfile.ErrNoDir) {
		t.Errorf("got %v, want outfile.ErrNoDir", err)
	}
	for _, p := range []string{ran, filepath.Join(dir, "no")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: the run went ahead", p)
		}
	}
}
