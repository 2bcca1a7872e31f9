package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// victimDir makes dir/victim with one file in it, and returns a check that it is untouched.
func victimDir(t *testing.T, dir string) func(what string) {
	t.Helper()
	v := filepath.Join(dir, "victim")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v, "important.txt"), []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return func(what string) {
		t.Helper()
		entries, _ := os.ReadDir(v)
		b, _ := os.ReadFile(filepath.Join(v, "important.txt"))
		if len(entries) != 1 || string(b) != "keep me\n" {
			t.Errorf("%s: the victim directory holds %d entries, important.txt %q", what, len(entries), b)
		}
	}
}

// TestCheckpointRefusedAtRunTime (issue 34, rule 1, second bullet): as an attempt begins,
// its checkpoint: directory is resolved with the values known only then (the run's log
// directory, a symlink an earlier step made) and refused where runall does not own it,
// the trial failing with the error and the directory left as it is; a directory of the
// trial's own is kept as before.
func TestCheckpointRefusedAtRunTime(t *testing.T) {
	dir := t.TempDir()
	untouched := victimDir(t, dir)
	body := `
config: {stop-on-failure: false}
tasks:
  - cmd: ln -s . here && mkdir -p own/ck && touch own/ck/stale
  - name: sweep
    parallel-tasks:
      - {name: home, cmd: 'true', checkpoint: '${HOME}'}
      - {name: link, cmd: 'true', checkpoint: here}
      - {name: logs, cmd: 'true', checkpoint: '${RUNALL_LOG_DIR}/ck'}
      - {name: own, cmd: 'true', checkpoint: own/ck}
`
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	self, _ := os.Executable()
	res, _ := Run(p, Options{Output: OutputOptions{Stdout: &out}, Record: RecordOptions{LogDir: filepath.Join(dir, "logs")},
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"), "RUNALL_TEST_BIN=" + self}})
	untouched("after the run")
	if _, err := os.Stat(filepath.Join(dir, "tasks.yml")); err != nil {
		t.Errorf("the task file's directory was emptied: %v\n%s", err, out.String())
	}
	got := byName(res)
	for name, want := range map[string]string{"home": "is $HOME", "link": "is the task file's directory",
		"logs": "is inside the log directory"} {
		r := got[name]
		if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "tasks.yml:") || !strings.Contains(r.Reason, want) {
			t.Errorf("%s: %s %q %q, want it failed saying %q\n%s", name, r.Status, r.Reason, "", want, out.String())
		}
	}
	if r := got["own"]; r.Status != results.StatusOK {
		t.Errorf("own: %s %q", r.Status, r.Reason)
	}
	// With no copy kept, the trial's own directory is left as it is (rule 1, fourth bullet).
	if _, err := os.Stat(filepath.Join(dir, "own", "ck", "stale")); err != nil {
		t.Errorf("the trial's own directory, of which no copy is kept, was emptied: %v", err)
	}
}

// TestAskedValueLeavesPathRefusedAtRun (issue 34, rule 1, third bullet): a sampler's value
// that would take a path out of its place (checkpoint: ck/<v> with "../victim" emptied a
// sibling; log-path: logs/<v> appended to a file outside) is refused as the run makes the
// trial, in every key that makes a path of a placeholder: nothing runs, the victim is
// untouched.
func TestAskedValueLeavesPathRefusedAtRun(t *testing.T) {
	keys := map[string]string{
		"checkpoint":   "checkpoint: ck/<v>",
		"log-path":     "log-path: logs/<v>",
		"cwd":          "cwd: work/<v>",
		"metrics":      "metrics: out/<v>",
		"upload: from": "upload: [{from: 'out/<v>', to: 's3://b/x/'}]",
	}
	for key, line := range keys {
		for _, v := range []string{"../victim", "../victim/important.txt", "../.."} {
			dir := t.TempDir()
			untouched := victimDir(t, dir)
			for _, d := range []string{"ck", "logs", "work", "out"} {
				os.MkdirAll(filepath.Join(dir, d), 0o755)
			}
			ask := fmt.Sprintf(`{"number": 0, "params": {"v": %q}}`, v)
			res, out, _ := runFile(t, fmt.Sprintf(`
config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: t <v>
        cmd: 'cd %[1]q && echo pwned > marker && rm -f victim/important.txt; echo runall-metric acc=1'
        %[2]s
        search: {ask: 'echo %[3]s', tell: 'true'}
        trials: 1
`, dir, line, strings.ReplaceAll(ask, `"`, `\"`)), Options{})
			what := key + " = " + v
			untouched(what)
			if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
				t.Errorf("%s: the trial ran\n%s", what, out)
			}
			failed := slices.ContainsFunc(res.Tasks, func(r results.Task) bool {
				return r.Status == results.StatusFailed && strings.Contains(r.Reason, key+": ") && strings.Contains(r.Reason, "where its placeholder stands")
			})
			if !failed {
				t.Errorf("%s: no task failed naming the key and why\n%s", what, out)
			}
		}
	}
}

// TestSampleChoicesNeverRun (issue 34, rule 2, third bullet): sample: choices were pasted into
// the command as shell code ($(touch x), backticks and a;touch y ran); each trial gets its
// choice exactly, bare, in double and in single quotes, and nothing in one runs.
func TestSampleChoicesNeverRun(t *testing.T) {
	dir := t.TempDir()
	_, out, err := runFile(t, fmt.Sprintf(`
tasks:
  - name: sweep
    parallel-tasks:
      - name: v <v> <n>
        cmd: |
          cd %q
          printf '%%s' <v> > "bare-$RUNALL_TASK_ID"
          printf '%%s' "<v>" > "double-$RUNALL_TASK_ID"
          printf '%%s' 'v=<v>' > "single-$RUNALL_TASK_ID"
        sample: {v: ['$(touch pwned)', '`+"`touch pwned`"+`', 'a;touch pwned', "it's"], n: 'int(1, 1000)'}
        trials: 8
`, dir), Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Errorf("a sample choice ran as a command\n%s", out)
	}
	for _, how := range []string{"bare", "double", "single"} {
		files, _ := filepath.Glob(filepath.Join(dir, how+"-*"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if got := strings.TrimPrefix(string(b), "v="); !slices.Contains([]string{"$(touch pwned)", "`touch pwned`", "a;touch pwned", "it's"}, got) {
				t.Errorf("%s: a trial got %q", how, got)
			}
		}
		if len(files) != 8 {
			t.Errorf("%s: %d trials wrote their value, want 8\n%s", how, len(files), out)
		}
	}
}
