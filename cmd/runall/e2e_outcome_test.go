package main_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// What a sweep leaves, as a user sees it: metrics, the objective, stop-when, the webhook
// and the report.

// outcome is the part of the results JSON these tests read.
type outcome struct {
	RunID     string            `json:"run_id"`
	Status    string            `json:"status"`
	LogDir    string            `json:"log_dir"`
	Objective map[string]string `json:"objective"`
	Best      string            `json:"best"`
	Stopped   string            `json:"stopped"`
	Report    string            `json:"report"`
	Tasks     []struct {
		Name         string               `json:"name"`
		Status       string               `json:"status"`
		Reason       string               `json:"reason"`
		Params       map[string]string    `json:"params"`
		Metrics      map[string]float64   `json:"metrics"`
		MetricSeries map[string][]float64 `json:"metric_series"`
		LogFile      string               `json:"log_file"`
	} `json:"tasks"`
}

func readOutcome(t *testing.T, body []byte) outcome {
	t.Helper()
	var o outcome
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatalf("results: %v\n%s", err, body)
	}
	return o
}

// TestSweepOutcome: metrics from files (lists per epoch) and from runall-metric lines, a
// failed trial's kept; the summary ranked by the objective with the best marked; params,
// best and objective in the results; the report in the log directory, made again by
// `runall report` from --log-dir.
func TestSweepOutcome(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("--fake-gpus", "16GiB,16GiB", "--log-dir", "logs", "--results", "results.json", testdata("outcome/sweep.yml"))
	r.wantCode(t, 1) // lr=0.3 failed

	res := readOutcome(t, []byte(e.read("results.json")))
	if res.Best != "lr=0.2 bs=64" || res.Objective["metric"] != "val_accuracy" || res.Objective["mode"] != "max" {
		t.Errorf("best %q, objective %v: want lr=0.2 bs=64 (lr=0.3 bs=64 scored more but failed), val_accuracy max", res.Best, res.Objective)
	}
	for _, tr := range res.Tasks {
		lr, bs := tr.Params["lr"], tr.Params["bs"]
		want := map[string]float64{"epoch": 3, "loss": 0.5, "val_accuracy": mustFloat(t, lr+bs)}
		if len(tr.Metrics) != 3 || tr.Metrics["epoch"] != 3 || tr.Metrics["loss"] != 0.5 || tr.Metrics["val_accuracy"] != want["val_accuracy"] {
			t.Errorf("%s (params %v): metrics %v, want %v", tr.Name, tr.Params, tr.Metrics, want)
		}
		if s := tr.MetricSeries; !slices.Equal(s["val_accuracy"], []float64{0.5, 0.6, want["val_accuracy"]}) || !slices.Equal(s["epoch"], []float64{1, 2, 3}) {
			t.Errorf("%s: series %v", tr.Name, s)
		}
	}
	// The summary: ranked, the objective's column, the best marked, the failed after the ok.
	var ranked []string
	col := -1 // the objective's column: the table is aligned
	for _, l := range lines(r.stdout) {
		if i := strings.Index(l, "VAL_ACCURACY"); i > 0 && strings.HasPrefix(l, "STATUS") {
			col = i
		}
		if f := strings.Fields(l); col > 0 && len(l) > col && len(f) > 0 && (f[0] == "ok" || f[0] == "failed") {
			ranked = append(ranked, f[0]+" "+strings.Join(strings.Fields(l[col:]), " "))
		}
	}
	want := []string{
		"ok 0.264 (best) lr=0.2 bs=64", "ok 0.232 lr=0.2 bs=32", "ok 0.164 lr=0.1 bs=64", "ok 0.132 lr=0.1 bs=32",
		"failed 0.364 lr=0.3 bs=64", "failed 0.332 lr=0.3 bs=32",
	}
	if !slices.Equal(ranked, want) {
		t.Errorf("summary rows\n got %q\nwant %q\n%s", ranked, want, r.stdout)
	}

	logDir := filepath.Join(e.dir, res.LogDir)
	if res.Report != filepath.Join(res.LogDir, "report.html") || !hasLine(r.stdout, "Report: "+res.Report) {
		t.Errorf("report %q; the output does not name it:\n%s", res.Report, r.stdout)
	}
	page := readReport(t, filepath.Join(logDir, "report.html"))
	wantReport(t, page, []string{"GPU-fake-0", "GPU-fake-1"}, res)

	again := e.run("report", "logs", "-o", "again.html") // --log-dir's latest run
	again.wantCode(t, 0)
	if !hasLine(again.stdout, "Report: again.html (6 tasks)") {
		t.Errorf("runall report: %v", again)
	}
	wantReport(t, readReport(t, e.path("again.html")), []string{"GPU-fake-0", "GPU-fake-1"}, res)
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return f
}

// report is what the tests read of a report page.
type report struct {
	html    string
	gpuRows []string // the timeline's rows, by device
	rows    []string // the trials table's rows, their text
}

// readReport reads a report strictly as XML (it is well-formed), with its timeline rows
// and table rows.
func readReport(t *testing.T, path string) report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := report{html: string(b)}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict, d.Entity = true, xml.HTMLEntity
	inRow := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s is not well-formed: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			if tok.Name.Local == "g" && attr["class"] == "gpu-row" {
				rep.gpuRows = append(rep.gpuRows, attr["data-gpu"])
			}
			if tok.Name.Local == "tr" {
				rep.rows, inRow = append(rep.rows, ""), true
			}
		case xml.EndElement:
			inRow = inRow && tok.Name.Local != "tr"
		case xml.CharData:
			if inRow {
				rep.rows[len(rep.rows)-1] += string(tok) + " "
			}
		}
	}
	return rep
}

// wantReport checks a report: a timeline row per GPU (their UUIDs start with the given
// prefixes), every task in the table, and nothing fetched from anywhere.
func wantReport(t *testing.T, rep report, gpus []string, res outcome) {
	t.Helper()
	if len(rep.gpuRows) != len(gpus) {
		t.Errorf("timeline rows %q, want one per GPU %q", rep.gpuRows, gpus)
	}
	for i := range min(len(gpus), len(rep.gpuRows)) {
		if !strings.HasPrefix(rep.gpuRows[i], gpus[i]) {
			t.Errorf("timeline row %d is %q, want %s", i, rep.gpuRows[i], gpus[i])
		}
	}
	if len(rep.rows) != len(res.Tasks)+1 {
		t.Errorf("%d table rows, want a header and %d tasks", len(rep.rows), len(res.Tasks))
	}
	for _, tr := range res.Tasks {
		if !slices.ContainsFunc(rep.rows, func(row string) bool { return strings.Contains(row, tr.Name) }) {
			t.Errorf("%q is not in the report's table", tr.Name)
		}
	}
	if res.Best != "" && (len(rep.rows) < 2 || !strings.Contains(rep.rows[1], res.Best)) {
		t.Errorf("the table's first row is not the best, %q: %q", res.Best, rep.rows)
	}
	// The one link is each trial's log beside the page, relative: the user follows it, it
	// loads nothing.
	html := regexp.MustCompile(`<a class="log" href="[^"/:]+"`).ReplaceAllString(rep.html, "")
	if m := regexp.MustCompile(`(?i)(src|href)\s*=|https?://|url\(|@import`).FindString(html); m != "" {
		t.Errorf("the report refers to something outside it: %q", m)
	}
}

// TestStopWhenSkips: once a trial meets stop-when, those not started are skipped with the
// reason, the steps after the sweep run, and the run succeeds.
func TestStopWhenSkips(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("outcome/stop.yml")
	r.wantCode(t, 0)
	res := readOutcome(t, []byte(e.read("results.json")))
	reason := `not started: stop-when "val_accuracy >= 0.9" was met by "t0.95" (val_accuracy=0.95)`
	for _, tr := range res.Tasks {
		switch tr.Name {
		case "t0.5", "t0.95", "after":
			if tr.Status != "ok" {
				t.Errorf("%s: %s, want ok", tr.Name, tr.Status)
			}
		default:
			if tr.Status != "skipped" || tr.Reason != reason {
				t.Errorf("%s: %s (%s), want skipped (%s)", tr.Name, tr.Status, tr.Reason, reason)
			}
		}
	}
	if !strings.HasPrefix(reason, "not started: "+res.Stopped) || !hasLine(r.stdout, "[t0.7] skipped: "+reason) {
		t.Errorf("stopped %q\n%v", res.Stopped, r)
	}
}

// hookServer records the POSTs it gets; it answers the first fail of them with a 500.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	fail   int
	bodies [][]byte
	auth   []string
	paths  []string
}

func newHookServer(t *testing.T, fail int) *hookServer {
	h := &hookServer{fail: fail}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.bodies, h.auth, h.paths = append(h.bodies, b), append(h.auth, r.Header.Get("Authorization")), append(h.paths, r.URL.RequestURI())
		if r.Method != http.MethodPost || len(h.bodies) <= h.fail {
			http.Error(w, "try again", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// TestNotifyAfterSIGTERM: a run stopped by SIGTERM still POSTs its results (after a 500,
// again), exits 143 as it would without notify, and shows neither token.
func TestNotifyAfterSIGTERM(t *testing.T) {
	t.Parallel()
	h := newHookServer(t, 1)
	const token, key = "tok-7f3a9c1e2b", "key-55d0e4a8c3"
	e := newE2E(t).withEnv("HOOK_URL="+h.URL, "HOOK_TOKEN="+token, "HOOK_KEY="+key)
	p := e.start("--log-dir", "logs", "--grace", "5s", testdata("outcome/notify.yml"))
	p.waitOutput("[waits] token **** key ****")
	p.signal(syscall.SIGTERM)
	r := p.wait()
	r.wantCode(t, 143)

	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.bodies) != 2 {
		t.Fatalf("%d POSTs, want 2 (a 500, then one that succeeded)\n%v", len(h.bodies), r)
	}
	if h.auth[1] != "Bearer "+token || h.paths[1] != "/hook?key="+key {
		t.Errorf("POST %s with Authorization %q", h.paths[1], h.auth[1])
	}
	sent := readOutcome(t, h.bodies[1])
	if sent.Status != "stopped" || len(sent.Tasks) != 1 || sent.Tasks[0].Name != "waits" {
		t.Errorf("the body is not the run's results: %s", h.bodies[1])
	}
	onDisk := e.read(filepath.Join(sent.LogDir, "results.json"))
	if onDisk != string(h.bodies[1]) {
		t.Errorf("the body differs from the log directory's results.json")
	}
	if !hasLine(r.stdout, "status: notify: sent the results to "+h.URL+"/… (HTTP 200)") {
		t.Errorf("no line saying the results were sent\n%v", r)
	}
	written := []string{r.stdout, r.stderr, onDisk, e.read(filepath.Join(sent.LogDir, "report.html"))}
	logs, _ := filepath.Glob(e.path(sent.LogDir, "*.log"))
	for _, l := range logs {
		written = append(written, e.read(l[len(e.dir)+1:]))
	}
	for _, s := range written {
		if strings.Contains(s, token) || strings.Contains(s, key) {
			t.Errorf("a secret is shown:\n%s", s)
		}
	}
}

// TestReportMergesShards: two shards of a sweep each put their results and GPU samples
// under the bucket; `runall report s3://` merges them into one report naming every trial,
// with the best of all shards and the device's memory.
func TestReportMergesShards(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	for i, shard := range []string{"0/2", "1/2"} {
		n := strconv.Itoa(i)
		s.run("--shard", shard, "--fake-gpus", "8GiB", "--log-dir", "logs"+n, "--results", "results"+n+".json", testdata("outcome/shards.yml")).wantCode(t, 0)
	}
	for _, name := range []string{"results.json", "gpu-samples.jsonl", "report.html"} {
		runs := slices.DeleteFunc(s.keys("sweep/.runall-runs/"), func(k string) bool { return !strings.HasSuffix(k, "/"+name) })
		if len(runs) != 2 {
			t.Fatalf("%s in the bucket: %q, want one per shard", name, runs)
		}
	}
	r := s.run("report", "s3://"+s.bucket+"/sweep/", "-o", "merged.html")
	r.wantCode(t, 0)
	if !hasLine(r.stdout, "Report: merged.html (7 tasks)") { // setup and six trials
		t.Errorf("runall report: %v", r)
	}
	merged := outcome{Best: "trial 1"}
	merged.Tasks = append(merged.Tasks, readOutcome(t, []byte(s.read("results0.json"))).Tasks...)
	for _, tr := range readOutcome(t, []byte(s.read("results1.json"))).Tasks {
		if tr.Name != "setup" {
			merged.Tasks = append(merged.Tasks, tr)
		}
	}
	rep := readReport(t, s.path("merged.html"))
	wantReport(t, rep, []string{"GPU-fake-0"}, merged) // the shards' samples of the one device
	if !strings.Contains(rep.html, "class=\"mem\"") {
		t.Errorf("the merged report draws no GPU memory")
	}
	if !strings.Contains(rep.html, "shards 0/2,1/2") {
		t.Errorf("the report does not say it merged shards 0/2 and 1/2")
	}

	missing := s.run("report", "s3://"+s.bucket+"/elsewhere/", "-o", "none.html")
	if missing.code == 0 || !strings.Contains(missing.stderr, "no runall results under this prefix") || s.exists("none.html") {
		t.Errorf("a prefix without results: %v", missing)
	}
}
