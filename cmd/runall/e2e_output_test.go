package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestJSONOutput(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("json.yml", "--output", "json")
	r.wantCode(t, 0)
	type event struct {
		Event  string            `json:"event"`
		Time   string            `json:"time"`
		Task   string            `json:"task"`
		Stream string            `json:"stream"`
		Line   *string           `json:"line"`
		Status string            `json:"status"`
		Tasks  []json.RawMessage `json:"tasks"`
	}
	var events []event
	for i, l := range lines(r.stdout) {
		var ev event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		if ev.Event == "" || ev.Time == "" {
			t.Errorf("line %d has no event or time: %s", i+1, l)
		}
		events = append(events, ev)
	}
	if len(events) == 0 {
		t.Fatalf("no events\n%v", r)
	}
	kinds := map[string]int{}
	for _, ev := range events {
		kinds[ev.Event]++
	}
	for _, k := range []string{"start", "output", "end", "run_end"} {
		if kinds[k] == 0 {
			t.Errorf("no %q event; have %v", k, kinds)
		}
	}
	if kinds["start"] != 3 || kinds["end"] != 3 || kinds["run_end"] != 1 {
		t.Errorf("event counts %v: want 3 start, 3 end, 1 run_end", kinds)
	}
	last := events[len(events)-1]
	if last.Event != "run_end" || last.Status != "ok" || len(last.Tasks) != 3 {
		t.Errorf("last event %+v: want run_end, ok, with 3 tasks", last)
	}
	var outputs []string
	for _, ev := range events {
		if ev.Event == "output" && ev.Line != nil {
			outputs = append(outputs, ev.Task+"|"+ev.Stream+"|"+*ev.Line)
		}
	}
	slices.Sort(outputs) // parallel children print in any order
	want := []string{`hello|stderr|warn`, `hello|stdout|hello`, `hello|stdout|{"not": "an event"}`, `p1|stdout|from p1`, `p2|stdout|from p2`}
	if !slices.Equal(outputs, want) {
		t.Errorf("output events (task|stream|line):\n got %q\nwant %q", outputs, want)
	}
}

func TestResultsFile(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("results.yml")
	r.wantCode(t, 1)
	res := e.results()
	if res.File != testdata("results.yml") || res.RunID == "" || res.Status != "failed" {
		t.Errorf("file %q, run_id %q, status %q: want the task file, an id, failed", res.File, res.RunID, res.Status)
	}
	if res.Schema != 3 {
		t.Errorf("schema %d, want 3 (docs/results.md)", res.Schema)
	}
	wantTime(t, "run started_at", res.StartedAt)
	wantTime(t, "run finished_at", res.FinishedAt)

	for _, tc := range []struct {
		name, cmd, status  string
		exitCode, attempts int
	}{
		{"fine", "echo fine", "ok", 0, 1},
		{"tolerated", "exit 2", "ignored", 2, 1},
		{"broken", "exit 3", "failed", 3, 1},
		{"skipped", "echo never", "skipped", noExitCode, 0},
	} {
		tr := res.task(t, tc.name)
		if tr.Cmd != tc.cmd {
			t.Errorf("%s: cmd %q, want %q", tc.name, tr.Cmd, tc.cmd)
		}
		tr.want(t, tc.status, tc.exitCode, tc.attempts)
		if tc.status == "skipped" {
			if tr.StartedAt != "" || tr.FinishedAt != "" {
				t.Errorf("%s: never ran, but has times %q, %q", tc.name, tr.StartedAt, tr.FinishedAt)
			}
			continue
		}
		start := wantTime(t, tc.name+" started_at", tr.StartedAt)
		end := wantTime(t, tc.name+" finished_at", tr.FinishedAt)
		if end.Before(start) {
			t.Errorf("%s: finished at %s, before it started at %s", tc.name, tr.FinishedAt, tr.StartedAt)
		}
	}
}

func TestLogFiles(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("logs.yml")
	r.wantCode(t, 0)
	if strings.Contains(r.stdout, "quiet out") {
		t.Errorf("show-output: false, but its output is shown\n%v", r)
	}
	res := e.results()
	if want := filepath.Join("logs", res.RunID); res.LogDir != want {
		t.Errorf("log_dir %q, want %q", res.LogDir, want)
	}
	var many []string
	for i := 1; i <= 300; i++ {
		many = append(many, "many "+strconv.Itoa(i))
	}
	for _, tc := range []struct {
		task string
		want []string
	}{
		{"many lines", many},
		{"quiet", []string{"quiet out", "quiet err"}},
		{"own log", []string{"own line"}},
	} {
		tr := res.task(t, tc.task)
		if filepath.Dir(tr.LogFile) != res.LogDir || !strings.HasSuffix(tr.LogFile, ".log") {
			t.Errorf("%s: log_file %q, want a .log file in %s", tc.task, tr.LogFile, res.LogDir)
			continue
		}
		wantAllLines(t, tr.LogFile, e.read(tr.LogFile), tc.want)
	}
	all := e.read("all.log") // config log-path: everything
	wantAllLines(t, "all.log", all, many)
	wantAllLines(t, "all.log", all, []string{"quiet out", "quiet err", "own line"})
	own := e.read("own.log") // the task's own log-path: only its output
	wantAllLines(t, "own.log", own, []string{"own line"})
	if strings.Contains(own, "many 1") {
		t.Errorf("own.log has another task's output:\n%s", own)
	}
	if _, err := os.Stat(e.path("logs", "latest")); err != nil {
		t.Errorf("no logs/latest: %v", err)
	}
}

// wantAllLines fails unless the file's text has each wanted line.
func wantAllLines(t *testing.T, name, text string, want []string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range lines(text) {
		have[l] = true
	}
	var missing []string
	for _, l := range want {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s lacks %d of %d lines, first %q\n%s", name, len(missing), len(want), missing[0], text)
	}
}

// TestDemo: demo --help describes demo, not run; the demo's trials report val_accuracy, asha
// prunes some, the importances name lr (wantDemoOutcome); the demo's file lands at one path,
// so that a second run finds the first one's history (its ETA) and adds no state file of its own.
func TestDemo(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	h := e.run("demo", "--help")
	h.wantCode(t, 0)
	if !strings.Contains(h.stdout, "Usage: runall demo") || strings.Contains(h.stdout, "Usage: runall [run]") {
		t.Errorf("demo --help does not print demo's usage\n%v", h)
	}
	for range 2 {
		r := e.run("demo", "--output", "plain")
		r.wantCode(t, 0)
		if strings.Contains(r.stdout, "resumed from step") { // each run trains again (--fresh)
			t.Errorf("the demo resumed trials from an earlier run's checkpoints\n%v", r)
		}
		if !strings.Contains(r.stdout, "serving the live report on http://127.0.0.1:") {
			t.Errorf("the demo does not say where it serves its live page\n%v", r)
		}
		// A wait shared by many trials is said once, plainly: the demo opened with 11 lines
		// "waiting: needs 3.0 GiB; GPU0 31.5 GiB free, 3.0 GiB reserved (tying ...)".
		if n := strings.Count(r.stdout, "] waiting: a moment"); n > 1 || strings.Contains(r.stdout, "tying a just-started") {
			t.Errorf("the demo says the wait for a just-started trial %d times\n%v", n, r)
		}
	}
	if !e.exists(".runall/demo/demo.yml") {
		t.Error("no .runall/demo/demo.yml")
	}
	wantDemoOutcome(t, e)
	// Beside it, state/checkpoints/ keeps the copies of the trials' checkpoints.
	state, err := filepath.Glob(e.path(".runall", "logs", "state", "*.json"))
	if err != nil || len(state) != 1 {
		t.Errorf("state files after two demo runs: %q, want one", state)
	}
}

// TestLogPathVarsExpanded: log-path: was taken as written, so ${LOGS_AT}/all.log made a
// folder named "${LOGS_AT}"; it is expanded as cwd: is, a task's with its env: too.
func TestLogPathVarsExpanded(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = append(e.env, "LOGS_AT="+e.path("out"))
	r := e.runFile("logs-vars.yml")
	r.wantCode(t, 0)
	wantAllLines(t, "out/all.log", e.read("out/all.log"), []string{"line 1", "line 2"})
	for lr, other := range map[string]string{"1": "2", "2": "1"} {
		log := e.read("out/trial-" + lr + ".log")
		wantAllLines(t, "trial-"+lr+".log", log, []string{"line " + lr})
		if strings.Contains(log, "line "+other) {
			t.Errorf("trial-%s.log has lr=%s's output:\n%s", lr, other, log)
		}
	}
	if _, err := os.Stat(e.path("${LOGS_AT}")); err == nil {
		t.Errorf("a folder named ${LOGS_AT} was made\n%v", r)
	}
}
