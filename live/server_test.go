package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/report"
	"github.com/runall/runall/runner"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

// fakeRun is a run's view as a test changes it.
type fakeRun struct {
	mu  sync.Mutex
	res *results.Run
}

func (f *fakeRun) results() *results.Run {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := *f.res
	c.Tasks = append([]results.Task(nil), f.res.Tasks...)
	return &c
}

func (f *fakeRun) set(fn func(r *results.Run)) {
	f.mu.Lock()
	fn(f.res)
	f.mu.Unlock()
}

// start serves a run of two trials in dir, one with a log, and returns its base URL.
func start(t *testing.T, o Options) (*Server, *fakeRun, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "002-b.log")
	if err := os.WriteFile(log, []byte("epoch 1\nepoch 2 \xe2\x9c\x93\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := &fakeRun{res: &results.Run{File: "tasks.yml", RunID: "r1", Status: results.StatusRunning, LogDir: dir,
		StartedAt: time.Now().Add(-time.Minute), Tasks: []results.Task{
			{ID: 1, Name: "a <script>alert(1)</script>", Status: results.StatusPending},
			{ID: 2, Name: "b", Status: results.StatusRunning, StartedAt: time.Now().Add(-time.Second), LogFile: log},
		}}}
	o.Addr = "127.0.0.1:0"
	s := New(o)
	addr, err := s.Serve(runner.View{Results: run.results, Metrics: http.NotFoundHandler(), OpenLog: os.Open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, run, "http://" + addr + "/"
}

func get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// TestAfterTheRunThePagesAreTheRecords: once the run ended, /api/run is results.json's
// bytes and / is report.html's, but for the version that makes a served page follow.
func TestAfterTheRunThePagesAreTheRecords(t *testing.T) {
	s, run, base := start(t, Options{})
	final := run.results()
	final.Status, final.FinishedAt = results.StatusOK, time.Now()
	s.Event(event.Event{Kind: event.RunEnded, Results: final}, nil)

	_, _, body := get(t, base+"api/run")
	want, _ := json.MarshalIndent(final, "", "  ")
	if !bytes.Equal(body, append(want, '\n')) {
		t.Errorf("/api/run after the run:\n%s\nwant results.json:\n%s", body, want)
	}
	_, h, page := get(t, base)
	var written bytes.Buffer
	if err := report.WriteRun(&written, final, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(page, written.Bytes()) {
		t.Errorf("the final page is not report.html to the byte")
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'sha256-") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("the page's policy lets other scripts run: %q", csp)
	}
}

// TestRunningState: while the run goes on /api/run has its running trials, and a trial's
// hostile name is escaped in the page.
func TestRunningState(t *testing.T) {
	_, _, base := start(t, Options{})
	_, _, body := get(t, base+"api/run")
	var r results.Run
	if err := json.Unmarshal(body, &r); err != nil || r.Status != results.StatusRunning || len(r.Tasks) != 2 || r.Tasks[1].Status != results.StatusRunning {
		t.Fatalf("/api/run: %v %s", err, body)
	}
	_, _, page := get(t, base)
	if bytes.Contains(page, []byte("<script>alert(1)")) || !bytes.Contains(page, []byte("a &lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Errorf("the trial's name is not escaped")
	}
}

// TestReadOnly: nothing but GET (and HEAD) is served, anywhere.
func TestReadOnly(t *testing.T) {
	_, _, base := start(t, Options{})
	for _, path := range []string{"", "api/run", "api/events", "api/log/2", "002-b.log", "metrics"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			req, _ := http.NewRequest(method, base+path, strings.NewReader("x"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s /%s: %d, want 405", method, path, resp.StatusCode)
			}
		}
	}
}

// TestLogs: a trial's log by its id, its tail and what follows, and the whole file at the
// name the page links; nothing else of the disk.
func TestLogs(t *testing.T) {
	_, run, base := start(t, Options{})
	code, _, body := get(t, base+"api/log/2")
	var p logPiece
	if err := json.Unmarshal(body, &p); code != 200 || err != nil || p.Text != "epoch 1\nepoch 2 \u2713\n" || p.Next != p.Size {
		t.Fatalf("the log's tail: %d %v %s", code, err, body)
	}
	f, _ := os.OpenFile(run.res.Tasks[1].LogFile, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprint(f, "epoch 3\n")
	f.Close()
	_, _, body = get(t, fmt.Sprintf("%sapi/log/2?from=%d", base, p.Next))
	if err := json.Unmarshal(body, &p); err != nil || p.Text != "epoch 3\n" {
		t.Errorf("what followed: %s", body)
	}
	if code, _, body := get(t, base+"002-b.log"); code != 200 || !strings.HasSuffix(string(body), "epoch 3\n") {
		t.Errorf("the whole log: %d %q", code, body)
	}
	for _, path := range []string{"api/log/1", "api/log/9", "api/log/x", "api/log/2?from=-7", "..%2f..%2fetc%2fpasswd", "tasks.yml", "001-a.log"} {
		if code, _, _ := get(t, base+path); code == 200 {
			t.Errorf("/%s served", path)
		}
	}
}

// TestFollowersAreBounded: past MaxFollowers, a browser is told to try later.
func TestFollowersAreBounded(t *testing.T) {
	_, _, base := start(t, Options{MaxFollowers: 2})
	for i := range 3 {
		resp, err := http.Get(base + "api/events")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		want := http.StatusOK
		if i == 2 {
			want = http.StatusServiceUnavailable
		}
		if resp.StatusCode != want {
			t.Errorf("follower %d: %d, want %d", i+1, resp.StatusCode, want)
		}
		if i == 2 {
			break
		}
		if line, _ := bufio.NewReader(resp.Body).ReadString('\n'); line != "event: version\n" {
			t.Errorf("follower %d got %q first", i+1, line)
		}
	}
}

// TestFollowersHearOfChanges: an event makes a new drawing, which every follower is told of.
func TestFollowersHearOfChanges(t *testing.T) {
	s, run, base := start(t, Options{Every: time.Millisecond})
	var readers []*bufio.Reader
	for range 3 {
		resp, err := http.Get(base + "api/events")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		readers = append(readers, bufio.NewReader(resp.Body))
	}
	first := make([]string, len(readers))
	for i, r := range readers {
		first[i] = nextVersion(t, r)
	}
	run.set(func(r *results.Run) { r.Tasks[0].Status = results.StatusRunning })
	s.Event(event.Event{Kind: event.TaskStarted}, nil)
	for i, r := range readers {
		if v := nextVersion(t, r); v == first[i] {
			t.Errorf("follower %d was told version %s again", i+1, v)
		}
	}
}

func nextVersion(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(v)
		}
	}
}

// TestEventNeverBlocks: the run's events go on while the page is being drawn (a drawing
// holds the frames' lock), however many come.
func TestEventNeverBlocks(t *testing.T) {
	s, _, _ := start(t, Options{})
	s.frames.mu.Lock()
	done := make(chan struct{})
	go func() {
		for range 100000 {
			s.Event(event.Event{Kind: event.TaskMetric}, nil)
		}
		close(done)
	}()
	<-done // a blocked Event would never get here: the lock is held until after
	s.frames.mu.Unlock()
}

// TestStalledClientIsDropped: a client that asks for pages and reads nothing is cut off
// once it takes nothing for WriteTimeout (its connection closed, its slot free), and the
// others are served meanwhile.
func TestStalledClientIsDropped(t *testing.T) {
	s, run, base := start(t, Options{WriteTimeout: 300 * time.Millisecond})
	run.set(func(r *results.Run) { // a page of a few hundred KiB
		for i := range 2000 {
			r.Tasks = append(r.Tasks, results.Task{ID: 10 + i, Name: fmt.Sprintf("trial %d", i), Status: results.StatusPending})
		}
	})
	s.frames.touch()
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(base, "/"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(conn, strings.Repeat(req, 64)); err != nil { // pages beyond any buffer
		t.Fatal(err)
	}
	other := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := other.Get(base + "api/run")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("another client was not served while one stalled: %v", err)
	}
	resp.Body.Close()
	for s.ln.open() > 0 { // the test's deadline fails it if the stalled client is never dropped
		time.Sleep(50 * time.Millisecond)
	}
	n, _ := io.Copy(io.Discard, conn)
	if page := len(s.frames.known().page); n >= int64(64*page) {
		t.Errorf("the stalled client got all %d bytes: it was not dropped", n)
	}
}

// TestOtherNamesRefused: a request that names the server by another name than its address or
// localhost is refused (DNS rebinding: a page of evil.example whose name now resolves to
// 127.0.0.1), and says how to allow a name; the names given are served.
func TestOtherNamesRefused(t *testing.T) {
	_, _, base := start(t, Options{Hosts: []string{"runall-sweep.ml.svc", ".example.org"}})
	port := strings.TrimSuffix(strings.TrimPrefix(base, "http://127.0.0.1"), "/")
	for host, want := range map[string]int{
		"127.0.0.1" + port: 200, "localhost" + port: 200, "LOCALHOST": 200, "[::1]" + port: 200, "10.1.2.3:9090": 200,
		"runall-sweep.ml.svc" + port: 200, "a.example.org": 200, "run.localhost" + port: 200,
		"evil.example" + port: 403, "example.org": 403, "runall-sweep.ml.svc.evil.example": 403, "127.0.0.1.evil.example": 403,
	} {
		req, _ := http.NewRequest("GET", strings.TrimSuffix(base, "/")+"/api/run", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
		if want == 403 && !strings.Contains(string(body), "--serve-hosts") {
			t.Errorf("Host %s: the refusal does not say how to allow the name: %s", host, body)
		}
	}
}

// TestAfterTheRunRootIsReportHTMLToTheByte: while the run goes on / follows it (data-live on
// <html>); once it ended / is the report.html the run writes, to the byte, with nothing
// added, as the README says.
func TestAfterTheRunRootIsReportHTMLToTheByte(t *testing.T) {
	s, run, base := start(t, Options{Every: time.Millisecond}) // a change is drawn at the next request
	if _, _, page := get(t, base); !bytes.Contains(page, []byte(`<html lang="en" data-live="`)) {
		t.Fatalf("the page of a running run does not follow it:\n%.300s", page)
	}
	final := run.results()
	final.Status, final.FinishedAt = results.StatusOK, time.Now()
	s.Event(event.Event{Kind: event.RunEnded, Results: final}, nil)
	var written bytes.Buffer
	if err := report.WriteRun(&written, final, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, _, page := get(t, base); !bytes.Equal(page, written.Bytes()) {
		t.Errorf("/ after the run is not report.html to the byte:\n%.300s\n--- report.html:\n%.300s", page, written.Bytes())
	}
}
