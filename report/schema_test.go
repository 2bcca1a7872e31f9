package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadSchemas: the report reads a results file of schema 1 (no schema field) and of
// schema 2 and 3, and refuses a newer one naming the file and what to do.
func TestLoadSchemas(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct{ name, body string }{
		{"v1.json", `{"file":"f.yml","run_id":"a","status":"ok","tasks":[{"id":0,"name":"a","status":"skipped","exit_code":-1}]}`},
		{"v2.json", `{"schema":2,"file":"f.yml","run_id":"b","status":"ok","tasks":[{"id":0,"name":"a","status":"skipped"}]}`},
		{"v3.json", `{"schema":3,"file":"f.yml","run_id":"c","status":"failed","tasks":[{"id":0,"name":"a","status":"ok","exit_code":0,"upload_errors":["u"]}]}`},
	} {
		in, err := Load(context.Background(), write(tc.name, tc.body), LoadOptions{})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var out strings.Builder
		if err := Write(&out, in); err != nil || !strings.Contains(out.String(), "<h2>Trials</h2>") {
			t.Errorf("%s: report not written: %v", tc.name, err)
		}
	}
	path := write("v4.json", `{"schema":4,"file":"f.yml","status":"ok","tasks":[]}`)
	_, err := Load(context.Background(), path, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "results schema 4") {
		t.Errorf("a schema 4 file: err = %v, want one naming %s and its schema", err, path)
	}
}
