package runner

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestSecretParamMasked: a secret a sampler hands out as a param (by its name, or a value
// that is a secret of the environment) and a secret in a sampler's stderr are masked in
// everything the run shows: the output (prefixes, status lines, the summary), every file it
// leaves (results.json, --results, the report, the log files' names and contents). They were
// shown raw in the prefix, the summary, the log file's name, results.json and the report.
func TestSecretParamMasked(t *testing.T) {
	const token, key = "tok-abcdef-9", "sk-live-1234567"
	dir := t.TempDir()
	resultsFile := filepath.Join(dir, "results.json")
	res, out, err := runFile(t, `
config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: train <api_token> <key>
        cmd: echo "runall-metric acc=1"; echo "got <api_token> <key>"
        log-path: `+dir+`/train-<api_token>.log
        search:
          ask: |
            n=$(flock asked.lock sh -c "n=\$(cat asked 2>/dev/null || echo 0); echo \$((n+1)) > asked; echo \$n")
            if [ "$n" -gt 0 ]; then echo "cannot load study: bad key `+key+`" >&2; exit 3; fi
            echo "{\"number\": $n, \"params\": {\"api_token\": \"`+token+`\", \"key\": \"`+key+`\"}}"
          tell: 'true'
        trials: 2
`, Options{Environ: []string{"WANDB_API_KEY=" + key}, Record: RecordOptions{ResultsFile: resultsFile}})
	if err == nil {
		t.Fatalf("the failing ask did not fail the run\n%s", out)
	}
	var tr results.Task
	for _, task := range res.Tasks {
		if strings.HasPrefix(task.Name, "train") && task.Status == results.StatusOK {
			tr = task
		}
	}
	if tr.Name == "" || !strings.Contains(out, "got **** ****") {
		t.Fatalf("the trial did not run with its params masked in its output\n%s", out)
	}
	shown := map[string]string{"the output": out}
	b, _ := json.Marshal(res)
	shown["the results"] = string(b)
	for _, root := range []string{res.LogDir, dir} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			shown["the name "+path] = path
			if !d.IsDir() {
				b, _ := os.ReadFile(path)
				shown[path] = string(b)
			}
			return nil
		})
	}
	for where, text := range shown {
		for _, secret := range []string{token, key} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %s", where, secret)
			}
		}
	}
	if !strings.Contains(out, "cannot load study: bad key ****") {
		t.Errorf("the sampler's error is not shown (masked)\n%s", out)
	}
}
