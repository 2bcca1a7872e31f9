package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAskedValuesNeverRun: the values a sampler hands out reach a trial's command as data,
// bare, in double quotes and in single quotes: each trial gets its value exactly, and
// nothing a value says runs (; $(...) and backticks ran, even inside "<v>", and a quote broke
// the command).
func TestAskedValuesNeverRun(t *testing.T) {
	values := []string{"1; touch pwned", "$(touch pwned)", "`touch pwned`", `a'b"c`, "$HOME", "x && touch pwned #"}
	dir := t.TempDir()
	var lines []string
	for i, v := range values {
		b, _ := json.Marshal(map[string]any{"number": i, "params": map[string]string{"v": v}})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "asks.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, err := runFile(t, fmt.Sprintf(`
config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: v <v>
        cmd: |
          cd %[1]q
          printf '%%s' <v> > "bare-$RUNALL_TASK_ID"
          printf '%%s' "<v>" > "double-$RUNALL_TASK_ID"
          printf '%%s' 'v=<v>' > "single-$RUNALL_TASK_ID"
          echo "runall-metric acc=1"
        search:
          ask: 'n=$(cat asked 2>/dev/null || echo 0); echo $((n+1)) > asked; sed -n "$((n+1))p" %[1]q/asks.jsonl'
          tell: 'true'
        trials: %[2]d
`, dir, len(values)), Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Errorf("a value ran as a command\n%s", out)
	}
	for _, how := range []string{"bare", "double", "single"} {
		files, _ := filepath.Glob(filepath.Join(dir, how+"-*"))
		var got []string
		for _, f := range files {
			b, _ := os.ReadFile(f)
			got = append(got, strings.TrimPrefix(string(b), "v="))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(values))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the trials got %q, want %q", how, got, want)
		}
	}
}
