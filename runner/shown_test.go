package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHiddenCharactersNeverShown: a name holding a bidirectional override (U+202E shows its
// end backwards, hiding what it says) or another character internal/printable hides is shown
// without it everywhere runall shows it: the output (prefixes, status, summary) and the
// report (it stayed raw in the report's names).
func TestHiddenCharactersNeverShown(t *testing.T) {
	res, out, err := runFile(t, "tasks:\n  - name: \"x=\\u202egpj.exe \\u2066y\"\n    cmd: echo \"runall-metric acc=1\"\n", Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	html, err := os.ReadFile(filepath.Join(res.LogDir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"the output": out, "the report": string(html)} {
		if strings.ContainsAny(text, "\u202e\u2066") {
			t.Errorf("%s shows a bidirectional control", where)
		}
		if !strings.Contains(text, "gpj.exe") {
			t.Errorf("%s does not show the name", where)
		}
	}
}
