package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runall/runall/internal/citest"
)

// bashfulCorpus is bashful's example task files, kept outside the repository
// (../shared/bashful-compat from its root); RUNALL_BASHFUL_CORPUS names another copy.
func bashfulCorpus(t *testing.T) string {
	dir := os.Getenv("RUNALL_BASHFUL_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "bashful-compat")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		citest.Unavailable(t, "no bashful corpus: %v (set RUNALL_BASHFUL_CORPUS)", err)
	}
	return dir
}

// bashfulScripts are stand-ins for bashful's example/scripts. bashful's sleep N seconds,
// at random; these take N hundredths of a second, and random-error.sh always fails, so
// that every run ends the same way.
var bashfulScripts = map[string]string{
	"random-worker.sh": `echo "working on ${2:-something}"
sleep "0.0$1"
echo "still working"
echo "done"
`,
	"random-error.sh": `echo "working on ${2:-something}"
echo "something went wrong" >&2
exit 1
`,
	"compile-something.sh": `for i in 1 2 3; do echo "compiling unit $i of ${2:-main}"; sleep 0.01; done
echo "compiled"
`,
	"setvar.sh":      "export VAR2=isnowset\n",
	"stress-line.sh": `seq 1 "$1" | sed 's/^/line /'` + "\n",
	"stress-char.sh": `head -c "$1" /dev/zero | tr '\0' x` + "\n", // no newline at all
}

// bashfulRun is one corpus file's run.
type bashfulRun struct {
	e   *e2e
	r   result
	res resultsFile // zero when runall wrote none (the file was rejected)
}

// bashfulCase is what a corpus file should do under runall, as under bashful.
type bashfulCase struct {
	code  int
	skip  string                             // why the file is not run
	check func(t *testing.T, run bashfulRun) // more than the exit code; may be nil
}

var bashfulCases = map[string]bashfulCase{
	"00-demo.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		wantAllLines(t, "build.log", run.e.read("build.log"), []string{"working on some-lib-4", "done"})
	}},
	"01-simple.yml":              {code: 0},
	"02-simple-and-pretty.yml":   {code: 0},
	"03-repetitive.yml":          {code: 0},
	"04-repetitive-parallel.yml": {code: 0},
	"05-minimal.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		if strings.Contains(run.r.stdout, "still working") {
			t.Error("show-task-output: false, but task output is shown")
		}
	}},
	"06-with-errors.yml": {code: 1, check: func(t *testing.T, run bashfulRun) {
		wantStatuses(t, run.res, map[string]string{
			"Prepping data":              "failed", // stop-on-failure: false
			"Cleaning data":              "ignored",
			"Compiling app (with trace)": "failed", // and stops the run
			"Packaging RPM":              "skipped",
			"Cleaning up workspace":      "skipped",
		})
	}},
	// 07 and 16 download scripts; the test's proxy refuses every connection, so the
	// downloads fail at once instead of depending on the network.
	"07-from-url.yml": {code: 1, check: func(t *testing.T, run bashfulRun) {
		for _, tr := range run.res.Tasks { // stop-on-failure: false: every one tries
			if tr.Status != "failed" || !strings.Contains(tr.Reason, "url https://") {
				t.Errorf("%s: %s (%s); want failed downloading its url", tr.Name, tr.Status, tr.Reason)
			}
		}
	}},
	"08-complicated.yml": {code: 1, check: func(t *testing.T, run bashfulRun) {
		wantStatuses(t, run.res, map[string]string{
			"Cloning some-lib-4":                  "ignored",
			"Cloning yup-another-app-7":           "ignored",
			"Installing Oracle client":            "ok",
			"Building and migrating another-app2": "failed",
		})
	}},
	// Every line reaches its log. stdout shows them all unless it did not keep up with the
	// stressers (the -race binary on a loaded machine), which it then says: no trial waits
	// for stdout (docs/taskfile.md).
	"09-stress-and-flow-control.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		lastLine, chars := "line 10000\n", strings.Repeat("x", 10000)+"\n"
		logged := map[string]int{}
		for _, tr := range run.res.Tasks {
			b, err := os.ReadFile(filepath.Join(run.e.dir, tr.LogFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{lastLine, chars} {
				if strings.Contains("\n"+string(b), "\n"+want) {
					logged[want]++
				}
			}
		}
		if logged[lastLine] != 4 || logged[chars] != 4 {
			t.Errorf("%d line stressers logged their last line and %d character stressers their 10000 characters, want 4 each", logged[lastLine], logged[chars])
		}
		if strings.Contains(run.r.stdout, " lines of output not shown: stdout did not take them in time;") {
			return
		}
		if n := strings.Count(run.r.stdout, "] "+lastLine); n != 4 {
			t.Errorf("%d line stressers printed their last line, want 4 (or a word of the lines not shown)", n)
		}
		if n := strings.Count(run.r.stdout, "] "+chars); n != 4 {
			t.Errorf("%d character stressers printed their 10000 characters, want 4 (or a word of the lines not shown)", n)
		}
	}},
	"10-bad-values.yml": {code: 2, check: func(t *testing.T, run bashfulRun) {
		if !strings.Contains(run.r.stderr, "10-bad-values.yml:20:5:") || !strings.Contains(run.r.stderr, `"no command"`) {
			t.Errorf("stderr does not point at the task with no command\n%v", run.r)
		}
		if run.e.exists("logs") {
			t.Error("a log directory was made: something ran")
		}
	}},
	// 11 and 13 also run random-error.sh, with ignore-failure: they pass.
	"11-tags.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		wantStatuses(t, run.res, map[string]string{"Cloning some-lib-4": "ignored", "Building Images": "ok"})
	}},
	"12-share-variables.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		if !strings.Contains(run.r.stdout, "] 1=isnowset 2=isnowset 3=isnowreallyset:sweeeeet\n") {
			t.Errorf("VAR1, VAR2 and VAR3 did not reach the last task\n%v", run.r)
		}
	}},
	"13-single-line.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		wantStatuses(t, run.res, map[string]string{"Compiling app (with trace)": "ignored", "Building public-6": "ok"})
	}},
	"14-sudo.yml": {skip: "touches /bin/true as root"},
	"15-yaml-includes.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		n := 0
		for _, name := range run.res.names() {
			if strings.HasPrefix(name, "Cloning ") {
				n++
			}
		}
		if n != 12 { // example/common-apps.yml lists 12
			t.Errorf("%d Cloning tasks, want one per app of the included list (12)", n)
		}
		wantStatuses(t, run.res, map[string]string{"Gathering Secrets": "ok"}) // from common-tasks.yml
	}},
	"16-bundle-manifest.yml": {code: 1, check: func(t *testing.T, run bashfulRun) {
		first := run.res.Tasks[0]
		if first.Status != "failed" || !strings.Contains(first.Reason, "url https://") {
			t.Errorf("first task %s (%s): want failed downloading its url", first.Status, first.Reason)
		}
		// It stops the run (stop-on-failure is on by default), as any failure does.
		wantStatuses(t, run.res, map[string]string{"/usr/bin/ls": "skipped"})
		if !strings.Contains(run.r.stderr, "bundle") {
			t.Errorf("no warning that bundle is ignored\n%v", run.r)
		}
	}},
	"17-current_working_directory.yml": {code: 0, check: func(t *testing.T, run bashfulRun) {
		wantLines(t, run.r, "[cwd] /tmp")
	}},
}

func TestBashfulCorpus(t *testing.T) {
	t.Parallel()
	corpus := bashfulCorpus(t)
	files, err := filepath.Glob(filepath.Join(corpus, "[0-9][0-9]-*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	for name := range bashfulCases {
		if !slices.Contains(names, name) {
			t.Errorf("the corpus has no %s", name)
		}
	}
	for _, name := range names {
		tc, ok := bashfulCases[name]
		if !ok {
			t.Errorf("%s: no expectation for this corpus file; add one to bashfulCases", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			t.Parallel()
			e := newBashfulDir(t, corpus)
			r := e.run("--log-dir", "logs", "--results", "results.json", filepath.Join(corpus, name))
			r.wantCode(t, tc.code)
			run := bashfulRun{e: e, r: r}
			if e.exists("results.json") {
				run.res = e.results()
			} else if tc.code != 2 {
				t.Fatalf("no results file\n%v", r)
			}
			for _, tr := range run.res.Tasks {
				if strings.Contains(tr.Cmd, "random-error.sh") && tr.Status != "ignored" && tr.Status != "failed" && tr.Status != "skipped" {
					t.Errorf("%s runs random-error.sh, which always fails, but is %s", tr.Name, tr.Status)
				}
				if tc.code == 0 && tr.Status != "ok" && tr.Status != "ignored" {
					t.Errorf("%s: %s (%s)", tr.Name, tr.Status, tr.Reason)
				}
			}
			if tc.check != nil {
				tc.check(t, run)
			}
			if t.Failed() {
				t.Logf("%v", r)
			}
		})
	}
}

// newBashfulDir makes a scratch directory laid out like the root of a bashful checkout:
// example/scripts/ with the stand-ins and example/common-*.yml from the corpus.
func newBashfulDir(t *testing.T, corpus string) *e2e {
	t.Helper()
	e := newE2E(t)
	// A proxy on a port where nothing listens: downloads fail at once, offline or not.
	e.env = append(e.env, "HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1")
	scripts := e.path("example", "scripts")
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range bashfulScripts {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	common, err := filepath.Glob(filepath.Join(corpus, "common-*.yml"))
	if err != nil || len(common) == 0 {
		t.Fatalf("no common-*.yml in the corpus (%v)", err)
	}
	for _, f := range common {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.path("example", filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// wantStatuses checks the status of the named tasks.
func wantStatuses(t *testing.T, res resultsFile, want map[string]string) {
	t.Helper()
	got := res.statuses()
	for name, status := range want {
		if got[name] != status {
			t.Errorf("%s: status %q, want %q", name, got[name], status)
		}
	}
}
