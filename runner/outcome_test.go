package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestMetricsFromFileAndLines: a metrics file of numbers and lists, runall-metric lines,
// a trial that failed and one that timed out after writing theirs, and one whose file is
// not JSON: each ends with what it reported, and the last with a warning.
func TestMetricsFromFileAndLines(t *testing.T) {
	res, out, err := runFile(t, `
config: {stop-on-failure: false}
tasks:
  - name: sweep
    metrics: m-<replace>.json
    parallel-tasks:
      - name: t<replace>
        for-each: [file]
        cmd: |
          echo '{"val_accuracy": [0.5, 0.75], "loss": 0.25}' > m-file.json
      - name: lines
        cmd: echo "runall-metric loss=2 acc=0.1"; echo "runall-metric loss=1"
        metrics: none.json
      - name: failed
        cmd: |
          echo '{"loss": [3, 2]}' > m-failed.json; exit 1
        metrics: m-failed.json
      - name: timeout
        cmd: |
          echo '{"loss": 9}' > m-timeout.json; sleep 5
        metrics: m-timeout.json
        timeout: 300ms
      - name: bad
        cmd: |
          echo '{"loss": [1, "x"]' > m-bad.json
        metrics: m-bad.json
`, Options{})
	if err == nil {
		t.Fatal("want the failed trials to fail the run")
	}
	tasks := byName(res)
	want := map[string]map[string]float64{
		"tfile":   {"val_accuracy": 0.75, "loss": 0.25},
		"lines":   {"loss": 1, "acc": 0.1},
		"failed":  {"loss": 2},
		"timeout": {"loss": 9},
		"bad":     nil,
	}
	for name, m := range want {
		if got := tasks[name].Metrics; !equalMetrics(got, m) {
			t.Errorf("%s: metrics %v, want %v", name, got, m)
		}
	}
	if s := tasks["tfile"].MetricSeries; !slices.Equal(s["val_accuracy"], []float64{0.5, 0.75}) || s["loss"] != nil {
		t.Errorf("tfile: series %v", s)
	}
	if s := tasks["lines"].MetricSeries; !slices.Equal(s["loss"], []float64{2, 1}) {
		t.Errorf("lines: series %v", s)
	}
	if p := tasks["tfile"].Params; p["replace"] != "file" {
		t.Errorf("tfile: params %v", p)
	}
	if w := tasks["lines"].MetricWarnings; len(w) != 1 || !strings.Contains(w[0], "none.json: not found") {
		t.Errorf("lines: warnings %q", w)
	}
	if w := tasks["failed"].MetricWarnings; len(w) != 0 {
		t.Errorf("failed: warnings %q", w)
	}
	bad := tasks["bad"].MetricWarnings
	if len(bad) != 1 || !strings.Contains(bad[0], "not a JSON object of metrics") {
		t.Fatalf("bad: warnings %q", bad)
	}
	if !strings.Contains(out, "bad: metric warnings:") || !strings.Contains(out, bad[0]) {
		t.Errorf("the summary does not show the warning:\n%s", out)
	}
	if log, _ := os.ReadFile(tasks["bad"].LogFile); !strings.Contains(string(log), "== metrics: "+bad[0]) {
		t.Errorf("the log does not show the warning:\n%s", log)
	}
}

func equalMetrics(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestObjectiveOrder: the summary lists trials best first with the objective's column and
// the best marked; the results name the best and the objective.
func TestObjectiveOrder(t *testing.T) {
	res, out, err := runFile(t, `
config: {objective: {metric: loss, mode: min}}
tasks:
  - name: setup
    cmd: 'true'
  - name: sweep
    parallel-tasks:
      - name: lr=<replace>
        for-each: ["0.3", "0.1", "0.2"]
        cmd: echo "runall-metric loss=<replace>"
`, Options{})
	if err != nil {
		t.Fatal(err, out)
	}
	if res.Best != "lr=0.1" || res.Objective == nil || *res.Objective != (results.Objective{Metric: "loss", Mode: "min"}) {
		t.Errorf("best %q objective %+v", res.Best, res.Objective)
	}
	var order []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "ok" {
			order = append(order, strings.Join(f[4:], " "))
		}
	}
	want := []string{"0.1 (best) lr=0.1", "0.2 lr=0.2", "0.3 lr=0.3", "- setup"}
	if !slices.Equal(order, want) {
		t.Errorf("summary rows %q, want %q\n%s", order, want, out)
	}
	if !strings.Contains(out, "LOSS") {
		t.Errorf("no objective column:\n%s", out)
	}
}

// TestStopWhen: one trial at a time; the second meets the condition, so the rest are
// skipped with the reason and the run succeeds.
func TestStopWhen(t *testing.T) {
	res, out, err := runFile(t, `
config:
  max-parallel-commands: 1
  stop-when: "val_accuracy >= 0.9"
tasks:
  - name: sweep
    parallel-tasks:
      - name: t<replace>
        for-each: ["0.5", "0.95", "0.7", "0.99"]
        cmd: echo "runall-metric val_accuracy=<replace>"
  - name: after the sweep
    cmd: 'true'
`, Options{})
	if err != nil {
		t.Fatalf("got %v, want success\n%s", err, out)
	}
	tasks := byName(res)
	for name, st := range map[string]results.Status{"t0.5": results.StatusOK, "t0.95": results.StatusOK,
		"t0.7": results.StatusSkipped, "t0.99": results.StatusSkipped, "after the sweep": results.StatusOK} {
		if tasks[name].Status != st {
			t.Errorf("%s: %s, want %s", name, tasks[name].Status, st)
		}
	}
	reason := `not started: stop-when "val_accuracy >= 0.9" was met by "t0.95" (val_accuracy=0.95)`
	if got := tasks["t0.7"].Reason; got != reason {
		t.Errorf("reason %q, want %q", got, reason)
	}
	if !strings.HasPrefix(reason, "not started: "+res.Stopped) || res.Stopped == "" {
		t.Errorf("results stopped %q", res.Stopped)
	}
}

// hook is a webhook receiver: the first failures answers fail with 500, then 200.
type hook struct {
	mu       sync.Mutex
	failures int
	bodies   [][]byte
	auth     []string
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bodies = append(h.bodies, b)
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	if len(h.bodies) <= h.failures {
		http.Error(w, "try later", http.StatusInternalServerError)
	}
}

// TestNotify: the results JSON is POSTed with its header, again after a 500; the token
// is masked in what runall writes even when a task prints it.
func TestNotify(t *testing.T) {
	h := &hook{failures: 1}
	srv := httptest.NewServer(h)
	defer srv.Close()
	const token = "s3cr3t-notify-token"
	res, out, err := runFile(t, `
config:
  notify:
    url: `+srv.URL+`/hook/${HOOK_PATH}
    headers: {Authorization: "Bearer ${NOTIFY_TOKEN}"}
tasks:
  - name: leak
    cmd: echo "token $NOTIFY_TOKEN path $HOOK_PATH"; exit 3
`, Options{Environ: []string{"NOTIFY_TOKEN=" + token, "HOOK_PATH=path-secret-123"}})
	if err == nil {
		t.Fatal("the task failed: want the run to fail")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.bodies) != 2 {
		t.Fatalf("%d requests, want 2 (a 500, then success)\n%s", len(h.bodies), out)
	}
	if h.auth[1] != "Bearer "+token {
		t.Errorf("Authorization %q", h.auth[1])
	}
	sent, err := results.Parse(h.bodies[1])
	if err != nil || sent.RunID != res.RunID || sent.Status != results.StatusFailed || len(sent.Tasks) != 1 {
		t.Fatalf("body: %v %+v", err, sent)
	}
	onDisk, err := os.ReadFile(filepath.Join(res.LogDir, ResultsFile))
	if err != nil || string(onDisk) != string(h.bodies[1]) {
		t.Errorf("the body is not the log directory's results.json (%v)", err)
	}
	logs, _ := os.ReadFile(res.Tasks[0].LogFile)
	for what, s := range map[string]string{"output": out, "log": string(logs), "body": string(h.bodies[1])} {
		if strings.Contains(s, token) || strings.Contains(s, "path-secret-123") {
			t.Errorf("the %s shows a secret:\n%s", what, s)
		}
	}
	if !strings.Contains(out, "token **** path ****") || !strings.Contains(out, "notify: sent the results to "+srv.URL+"/… (HTTP 200)") {
		t.Errorf("output:\n%s", out)
	}
}

// TestNotifyFailureKeepsExitCode: a webhook that refuses is reported, and the run that
// succeeded still succeeds.
func TestNotifyFailureKeepsExitCode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	res, out, err := runFile(t, "config: {notify: {url: "+srv.URL+"}}\ntasks: [{cmd: 'true'}]\n", Options{})
	if err != nil || res.Status != results.StatusOK {
		t.Fatalf("got %v, want success\n%s", err, out)
	}
	if !strings.Contains(out, "notify: could not send the results to "+srv.URL+" after 1 attempt(s): HTTP 403 Forbidden: not retried") {
		t.Errorf("output:\n%s", out)
	}
	var sent map[string]any
	b, _ := os.ReadFile(filepath.Join(res.LogDir, ResultsFile))
	if err := json.Unmarshal(b, &sent); err != nil || sent["report"] != filepath.Join(res.LogDir, ReportFile) {
		t.Errorf("results in the log directory: %v %v", err, sent["report"])
	}
	if _, err := os.Stat(filepath.Join(res.LogDir, ReportFile)); err != nil || !strings.Contains(out, "Report: "+filepath.Join(res.LogDir, ReportFile)) {
		t.Errorf("report: %v\n%s", err, out)
	}
}

// TestNotifyHeaderFromSecretFile: a token read from a file ends in a newline, which is no
// part of the header; a value with a newline inside cannot be sent and is not retried.
func TestNotifyHeaderFromSecretFile(t *testing.T) {
	h := &hook{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	file := "config: {notify: {url: " + srv.URL + ", headers: {Authorization: \"Bearer ${TOKEN}\"}}}\ntasks: [{cmd: 'true'}]\n"
	res, out, err := runFile(t, file, Options{Environ: []string{"TOKEN=tok-from-file\n"}})
	if err != nil || res.Status != results.StatusOK {
		t.Fatalf("got %v\n%s", err, out)
	}
	h.mu.Lock()
	if len(h.auth) != 1 || h.auth[0] != "Bearer tok-from-file" {
		t.Errorf("Authorization %q, want one POST with \"Bearer tok-from-file\"", h.auth)
	}
	h.mu.Unlock()

	res, out, err = runFile(t, file, Options{Environ: []string{"TOKEN=two\nlines"}})
	if err != nil || res.Status != results.StatusOK {
		t.Fatalf("got %v, want success\n%s", err, out)
	}
	want := "notify: could not send the results to " + srv.URL + " after 1 attempt(s): header Authorization: its value holds a control character"
	if !strings.Contains(out, want) || strings.Contains(out, "two\nlines") {
		t.Errorf("output:\n%s", out)
	}
}

// TestNotifyRetriesEnd: a webhook that always answers 500 is asked again, with backoff,
// until notify's timeout, then the failure is reported and the run's success stands.
func TestNotifyRetriesEnd(t *testing.T) {
	h := &hook{failures: 1 << 30}
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, out, err := runFile(t, "config: {notify: {url: "+srv.URL+", timeout: 1s}}\ntasks: [{cmd: 'true'}]\n", Options{})
	if err != nil || res.Status != results.StatusOK {
		t.Fatalf("got %v, want success\n%s", err, out)
	}
	h.mu.Lock()
	n := len(h.bodies)
	h.mu.Unlock()
	want := fmt.Sprintf("notify: could not send the results to %s after %d attempt(s): HTTP 500 Internal Server Error", srv.URL, n)
	if n < 2 || !strings.Contains(out, want) {
		t.Errorf("%d POSTs, want 2 or more and the failure reported as %q:\n%s", n, want, out)
	}
}
