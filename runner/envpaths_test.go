package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestAskedValueThroughEnvRefusedAtRun (issue 42, point 2): a sampler's value that reaches a
// path key through env: (env: {D: "<v>"} then checkpoint: ck/${D}), or by its variable
// written in the path (${RUNALL_PARAM_v}), is judged as a placeholder written there: refused
// as the run makes the trial, nothing of it runs and the victim is untouched; a plain value
// runs.
func TestAskedValueThroughEnvRefusedAtRun(t *testing.T) {
	keys := map[string]string{
		"checkpoint":   "env: {D: '<v>'}\n        checkpoint: ck/${D}",
		"log-path":     "env: {A: '<v>', D: 'x${A}'}\n        log-path: logs/${D}",
		"cwd":          "env: {D: '<v>'}\n        cwd: work/${D}",
		"metrics":      "env: {D: '<v>'}\n        metrics: out/${D}",
		"upload: from": "env: {D: '<v>'}\n        upload: [{from: 'out/${D}', to: 's3://b/x/'}]",
		"checkpoint ":  "checkpoint: ck/${RUNALL_PARAM_v}",
	}
	for key, line := range keys {
		for _, v := range []string{"../victim", "../victim/important.txt", "../..", "plain"} {
			dir := t.TempDir()
			untouched := victimDir(t, dir)
			ask := fmt.Sprintf(`{"number": 0, "params": {"v": %q}}`, v)
			res, out, _ := runFile(t, fmt.Sprintf(`
config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: t <v>
        cmd: 'cd %[1]q && echo ran > marker && rm -f victim/important.txt; echo runall-metric acc=1'
        %[2]s
        search: {ask: 'mkdir -p ck logs work/plain out; echo %[3]s', tell: 'true'}
        trials: 1
`, dir, line, strings.ReplaceAll(ask, `"`, `\"`)), Options{})
			what := key + " = " + v
			_, err := os.Stat(filepath.Join(dir, "marker"))
			if v == "plain" {
				if err != nil {
					t.Errorf("%s: the trial did not run\n%s", what, out)
				}
				continue
			}
			untouched(what)
			if err == nil {
				t.Errorf("%s: the trial ran\n%s", what, out)
			}
			failed := slices.ContainsFunc(res.Tasks, func(r results.Task) bool {
				return r.Status == results.StatusFailed && strings.Contains(r.Reason, strings.TrimSpace(key)+": ") && strings.Contains(r.Reason, "where its placeholder stands")
			})
			if !failed {
				t.Errorf("%s: no task failed naming the key and why\n%s", what, out)
			}
		}
	}
}
