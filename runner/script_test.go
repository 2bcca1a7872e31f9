package runner

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// A url: script is downloaded into the log directory's scripts/, whole and executable, and
// run; the temporary file it was written through is not left beside it (it goes through
// internal/owned's Replace, renamed into place inside the log directory).
func TestURLScriptDownloadedIntoScripts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("#!/bin/sh\necho downloaded-and-run > ran.txt\n"))
	}))
	defer srv.Close()
	res, out, err := runFile(t, "tasks:\n  - url: "+srv.URL+"/train.sh\n", Options{})
	if err != nil || res.Status != results.StatusOK {
		t.Fatalf("run: %v, %s:\n%s", err, res.Status, out)
	}
	run := filepath.Dir(res.Tasks[0].LogFile) // the run's log directory
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(run)), "ran.txt")); err != nil || string(b) != "downloaded-and-run\n" {
		t.Errorf("the script did not run: ran.txt is %q (%v)", b, err)
	}
	scripts, _ := filepath.Glob(filepath.Join(run, "scripts", "*"))
	hidden, _ := filepath.Glob(filepath.Join(run, "scripts", ".*"))
	if len(scripts) != 1 || len(hidden) != 0 || !strings.HasSuffix(scripts[0], "-train.sh") {
		t.Fatalf("scripts/ holds %q and %q, want one *-train.sh and no temporary file", scripts, hidden)
	}
	if fi, err := os.Stat(scripts[0]); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the script's mode is %v (%v), want 0755", fi.Mode(), err)
	}
}
