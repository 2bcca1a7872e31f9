package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/internal/outfile"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// TestWebhookDoesNotFollowRedirects (issue: the webhook follows redirects with its
// secrets): a 307 to another server is a failure that names where it pointed; the other
// server never sees the body or the headers.
func TestWebhookDoesNotFollowRedirects(t *testing.T) {
	var mu sync.Mutex
	var got []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"))
		mu.Unlock()
	}))
	defer thief.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/steal?x=1", http.StatusTemporaryRedirect)
	}))
	defer hook.Close()
	res, out, err := runFile(t, `
config:
  notify:
    url: `+hook.URL+`/hook
    headers: {Authorization: "Bearer ${NOTIFY_TOKEN}", X-Api-Key: "${NOTIFY_TOKEN}"}
tasks: [{cmd: 'true'}]
`, Options{Environ: []string{"NOTIFY_TOKEN=tok-0123456789"}})
	if err != nil || res.Status != results.StatusOK {
		t.Fatalf("got %v, want success (a failed notify changes no exit code)\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("the redirect's target got %d request(s): %q", len(got), got)
	}
	want := "notify: could not send the results to " + hook.URL + "/… after 1 attempt(s): HTTP 307 Temporary Redirect to " + thief.URL + "/…: redirects are not followed"
	if !strings.Contains(out, want) {
		t.Errorf("want %q in the output:\n%s", want, out)
	}
}

// TestPendingGaugeExcludesRunning (issue: runall_tasks{state="pending"} still counts
// running tasks): a task is pending, running or finished, never two at once, through
// retries and OOM requeues.
func TestPendingGaugeExcludesRunning(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte("tasks: [{cmd: a}, {cmd: b}, {cmd: c}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	m := newMetrics(p)
	state := func() map[string]float64 {
		fams, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			if f.GetName() != "runall_tasks" {
				continue
			}
			for _, s := range f.GetMetric() {
				got[s.GetLabel()[0].GetValue()] = s.GetGauge().GetValue()
			}
		}
		return got
	}
	check := func(step string, pending, running, ok float64) {
		t.Helper()
		got := state()
		if got["pending"] != pending || got["running"] != running || got["ok"] != ok {
			t.Errorf("%s: pending %v, running %v, ok %v; want %v, %v, %v", step, got["pending"], got["running"], got["ok"], pending, running, ok)
		}
	}
	a, b := p.Tasks[0], p.Tasks[1]
	check("start", 3, 0, 0)
	m.Event(event.Event{Kind: event.TaskStarted, Task: a}, nil)
	m.Event(event.Event{Kind: event.TaskStarted, Task: b}, nil)
	check("two started", 1, 2, 0)
	m.Event(event.Event{Kind: event.TaskEnded, Task: a, Requeued: true, Status: results.StatusFailed}, nil) // pending again
	check("one requeued", 2, 1, 0)
	m.Event(event.Event{Kind: event.TaskEnded, Task: b, Final: true, Status: results.StatusOK, Duration: time.Second}, nil)
	check("one finished", 2, 0, 1)
}

// TestMetricsPathNeverEnds (issue: a metrics path that never ends hangs runall): a trial
// that leaves a FIFO at its metrics path, and one whose metrics: is a character device,
// are warned about and the run goes on to the next task and its results.
func TestMetricsPathNeverEnds(t *testing.T) {
	type ran struct {
		res *results.Run
		out string
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, out, err := runFile(t, `
tasks:
  - name: fifo
    cmd: mkfifo m.json
    metrics: m.json
  - name: device
    cmd: 'true'
    metrics: /dev/zero
  - name: after
    cmd: echo after
`, Options{})
		done <- ran{res, out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("got %v, want success\n%s", r.err, r.out)
		}
		tasks := byName(r.res)
		if tasks["after"].Status != results.StatusOK {
			t.Errorf("the task after: %s", tasks["after"].Status)
		}
		for name, want := range map[string]string{"fifo": "is not a regular file", "device": "is not a regular file"} {
			if w := strings.Join(tasks[name].MetricWarnings, "\n"); !strings.Contains(w, want) {
				t.Errorf("%s: warnings %q, want %q", name, w, want)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run still waits on a metrics file after 30s")
	}
}

// TestSecretsLeakThroughThreeGaps (issue: secrets leak through three gaps): (a) a task named
// by a command that holds a secret, and a matrix value that is one; (b) a secret a setup
// task exports; (c) a secret across the 64 KiB split of a long line. Nothing runall writes,
// no file name in the log directory, shows any of them.
func TestSecretsLeakThroughThreeGaps(t *testing.T) {
	const (
		hf     = "hf_secret_value_1234"
		wandb  = "wandb-exported-42-secret" // made by the shell: only the export shows it
		middle = "middle-secret-token-xyz"
	)
	pad := 64<<10 - len(middle)/2
	res, out, err := runFile(t, `
tasks:
  - cmd: export WANDB_API_KEY="wandb-exported-$((6*7))-secret"
  - cmd: echo "key=$WANDB_API_KEY"
  - cmd: echo train --token `+hf+`
  - name: sweep
    parallel-tasks:
      - name: trial <replace>
        for-each: [`+hf+`]
        cmd: echo one
  - name: long
    cmd: head -c `+strconv.Itoa(pad)+` /dev/zero | tr '\0' x; echo "$MIDDLE_TOKEN"
`, Options{Environ: []string{"HF_TOKEN=" + hf, "MIDDLE_TOKEN=" + middle}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	secrets := []string{hf, wandb, middle}
	leaks := func(what, s string) {
		t.Helper()
		joined := strings.ReplaceAll(s, "\n", "")
		for _, secret := range secrets {
			if strings.Contains(joined, secret) {
				t.Errorf("%s shows %q", what, secret)
			}
		}
	}
	leaks("the output", out)
	b, _ := json.Marshal(res)
	leaks("the results", string(b))
	err = filepath.WalkDir(filepath.Dir(res.LogDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		leaks("a file name", path)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			leaks(path, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "key=****") {
		t.Errorf("the exported secret is not masked in the output:\n%s", out)
	}
}

// TestFullDiskIsSilent (issue: a full disk is silent): a task's log and config log-path on
// a full disk (/dev/full: every write fails with ENOSPC) are each reported once, in the
// output and the summary; the tasks' outcome stands and the run says its record is
// incomplete.
func TestFullDiskIsSilent(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	const id = "full-disk"
	if err := os.MkdirAll(filepath.Join(logDir, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", filepath.Join(logDir, id, "001-loud.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(`
config: {log-path: /dev/full}
tasks:
  - name: loud
    cmd: for i in 1 2 3; do echo line $i; done
  - name: after
    cmd: echo done > after.txt
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res, err := Run(p, Options{Environ: []string{"PATH=" + os.Getenv("PATH")}, Output: OutputOptions{Stdout: &buf}, Record: RecordOptions{RunID: id, LogDir: logDir}})
	out := buf.String()
	if !errors.Is(err, ErrIncompleteRecord) {
		t.Errorf("got %v, want ErrIncompleteRecord\n%s", err, out)
	}
	if res == nil {
		t.Fatal("no results")
	}
	for _, tr := range res.Tasks {
		if tr.Status != results.StatusOK {
			t.Errorf("task %s: %s, want ok", tr.Name, tr.Status)
		}
	}
	own := filepath.Join(logDir, id, "001-loud.log") + ": no space left on device"
	combined := "/dev/full: no space left on device"
	for _, want := range []string{own, combined} {
		if n := strings.Count(out, "could not write the log "+want); n != 1 {
			t.Errorf("%q reported %d times, want once:\n%s", want, n, out)
		}
		if !slices.Contains(res.LogErrors, want) {
			t.Errorf("results' log_errors %q lack %q", res.LogErrors, want)
		}
	}
	if !strings.Contains(out, "Logs not written in full (the record is incomplete):\n  "+own) {
		t.Errorf("the summary does not list the logs:\n%s", out)
	}
}

// TestLogPathThatCannotBeOpened: a task's log-path that cannot be opened (a file stands
// where its directory would be) is said, the task runs and keeps its outcome, and the run's
// record is incomplete (exit 1), as for a log that cannot be written.
func TestLogPathThatCannotBeOpened(t *testing.T) {
	res, out, err := runFile(t, `
tasks:
  - name: setup
    cmd: touch blocker
  - name: a
    cmd: echo hi
    log-path: blocker/a.log
`, Options{})
	if !errors.Is(err, ErrIncompleteRecord) {
		t.Errorf("got %v, want ErrIncompleteRecord\n%s", err, out)
	}
	if res == nil || len(res.Tasks) != 2 || res.Tasks[1].Status != results.StatusOK {
		t.Fatalf("results %+v, want a ok\n%s", res, out)
	}
	if len(res.LogErrors) != 1 || !strings.Contains(res.LogErrors[0], "blocker/a.log: not a directory") ||
		!strings.Contains(out, "cannot open log-path") {
		t.Errorf("log_errors %q; want the log-path, said in the output\n%s", res.LogErrors, out)
	}
}

// TestResultsInMissingDirRefusedByRun: Run itself (not only the CLI) refuses a ResultsFile
// whose directory does not exist, before any task runs, and creates no directory.
func TestResultsInMissingDirRefusedByRun(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	_, _, err := runFile(t, "tasks:\n  - cmd: touch "+ran+"\n", Options{Record: RecordOptions{ResultsFile: filepath.Join(dir, "no", "such", "r.json")}})
	if !errors.Is(err, outfile.ErrNoDir) {
		t.Errorf("got %v, want outfile.ErrNoDir", err)
	}
	for _, p := range []string{ran, filepath.Join(dir, "no")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: the run went ahead", p)
		}
	}
}
