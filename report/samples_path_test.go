package report

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestStoredSamplesPathStaysInLogDir (issue 34, rule 1, first bullet: results read back): a
// results file's gpu_samples is read only when it names the samples file of the run's log
// directory; one that names any other file (a results.json written by someone else) is not
// read, and the file beside the results is used instead.
func TestStoredSamplesPathStaysInLogDir(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(victim, []byte(`{"truncated": true}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	for name, body := range map[string]map[string]any{
		"elsewhere":         {"log_dir": run, "gpu_samples": victim},
		"log dir says so":   {"log_dir": filepath.Dir(victim), "gpu_samples": victim},
		"named as samples?": {"log_dir": run, "gpu_samples": filepath.Join(run, "..", filepath.Base(filepath.Dir(victim)), "secret")},
	} {
		b, _ := json.Marshal(body)
		file := filepath.Join(run, "results.json")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := Load(context.Background(), file, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(in.Samples) != 0 {
			t.Errorf("%s: the report read %s, named by the results file", name, victim)
		}
	}
}
