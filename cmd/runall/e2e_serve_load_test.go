package main_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Many browsers following a run, and browsers that stop reading: the trials do not wait on
// them, and runall drops the ones that stall, with its memory bounded.

// follower is what one browser following the run did: as the page's script does, it
// fetches the page, follows the event stream, and fetches the page again at each version
// it does not show, until the page shows the run ended.
type follower struct {
	pages, versions int
	final           []byte // the last page, which shows the run ended
	err             error
}

var (
	runStatusRE = regexp.MustCompile(`<header id="summary">\s*<h1>[^<]*</h1>\s*<p class="meta">.*?<span class="st (\w+)">`)
	versionRE   = regexp.MustCompile(` data-live="(\d+)"`)
)

func follow(url string) follower {
	var f follower
	client := &http.Client{Timeout: time.Minute}
	page := func() (string, bool) {
		resp, err := client.Get(url)
		if err != nil {
			f.err = err
			return "", false
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			f.err = fmt.Errorf("page: %d %v", resp.StatusCode, err)
			return "", false
		}
		f.pages++
		f.final = b
		v := versionRE.FindSubmatch(b)
		if v == nil {
			return "", true // a page that follows nothing: the run's last, report.html
		}
		m := runStatusRE.FindSubmatch(b)
		return string(v[1]), m != nil && string(m[1]) != "running"
	}
	shown, ended := page()
	if f.err != nil || ended {
		return f
	}
	resp, err := http.Get(url + "api/events")
	if err != nil {
		f.err = err
		return f
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			f.err = fmt.Errorf("the event stream ended before the run: %w", err)
			return f
		}
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		f.versions++
		if v == shown {
			continue
		}
		if shown, ended = page(); f.err != nil || ended {
			return f
		}
	}
}

// followedRun runs testdata/serve/follow.yml with n browsers following it to its end, and
// returns its results (log_dir made absolute), what each follower did, and the CPU time
// runall took.
func followedRun(t *testing.T, n int) (resultsFile, []follower, time.Duration) {
	t.Helper()
	e := newE2E(t)
	p := e.start("--log-dir", "logs", "--results", "results.json", "--fake-gpus", "2x16GiB",
		"--serve", "127.0.0.1:0", "--serve-after", "3m", testdata("serve/follow.yml"))
	url := served(p)
	out := make([]follower, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { out[i] = follow(url) })
	}
	wg.Wait()
	// The run has ended when runall says it keeps serving; SIGTERM then ends that alone.
	for deadline := time.Now().Add(cmdTimeout); !strings.Contains(p.stderr.String(), "its report stays served"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end\n--- stdout:\n%s\n--- stderr:\n%s", p.stdout, p.stderr)
		}
	}
	p.signal(syscall.SIGTERM)
	p.wait().wantCode(t, 0)
	cpu := p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	res := e.results()
	res.LogDir = e.path(res.LogDir)
	return res, out, cpu
}

// TestFollowersCostNothing: 50 browsers following the whole run cost its trials nothing:
// the same trials end ok, each follower is told of the run's changes as it goes and ends
// with the page report.html holds. The trials' times with and without followers, side by
// side, are logged (-v) and in docs/benchmarks.md; they are not asserted.
func TestFollowersCostNothing(t *testing.T) {
	alone, _, cpuAlone := followedRun(t, 0)
	followed, followers, cpuFollowed := followedRun(t, 50)
	for _, r := range []resultsFile{alone, followed} {
		for _, tr := range r.Tasks {
			if tr.Status != "ok" {
				t.Errorf("%s: %s (%s), want ok", tr.Name, tr.Status, tr.Reason)
			}
		}
	}
	if !slices.Equal(alone.names(), followed.names()) {
		t.Errorf("the trials differ: %q and %q", alone.names(), followed.names())
	}
	report, err := os.ReadFile(followed.LogDir + "/report.html")
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	for i, f := range followers {
		pages += f.pages
		final := f.final // report.html to the byte
		switch {
		case f.err != nil:
			t.Errorf("follower %d: %v", i+1, f.err)
		case f.versions < 2:
			t.Errorf("follower %d was told of %d versions: it did not follow the run", i+1, f.versions)
		case string(final) != string(report):
			t.Errorf("follower %d's last page is not report.html", i+1)
		}
	}
	t.Logf("trial seconds, alone:           %s; runall's CPU %v", spread(trialSeconds(t, alone)), cpuAlone)
	t.Logf("trial seconds, 50 followers:    %s; runall's CPU %v; %d pages served", spread(trialSeconds(t, followed)), cpuFollowed, pages)
}

// spread is the median and the most of some seconds.
func spread(s []float64) string {
	slices.Sort(s)
	return fmt.Sprintf("median %.2f s, max %.2f s over %d trials", s[len(s)/2], s[len(s)-1], len(s))
}

// TestStalledBrowsersAreDropped: browsers that ask for page after page and read nothing are
// cut off (runall's sockets back to what they were), runall's memory stays bounded
// meanwhile, another browser is served, and the trials run on to their end.
func TestStalledBrowsersAreDropped(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	p := e.start("--log-dir", "logs", "--results", "results.json", "--fake-gpus", "2x16GiB", "--serve", "127.0.0.1:0", testdata("serve/sweep.yml"))
	t.Cleanup(func() { _ = os.WriteFile(e.path("tick1"), nil, 0o644); _ = os.WriteFile(e.path("tick2"), nil, 0o644) })
	url := served(p)
	pid := p.cmd.Process.Pid
	sockets := openSockets(t, pid) // its listener's, before any client
	if code, _ := httpGet(t, url); code != 200 {
		t.Fatalf("the page: %d", code)
	}
	rss := memoryKiB(t, pid, "VmRSS")
	const stalled = 30
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	for range stalled {
		c, err := dialer.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 200)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the stalled clients' connections", func() bool { return openSockets(t, pid) >= stalled })
	if code, _ := httpGet(t, url+"api/run"); code != 200 {
		t.Errorf("another browser was not served while %d stalled: %d", stalled, code)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for openSockets(t, pid) > sockets {
		if time.Now().After(deadline) {
			t.Fatalf("runall still holds %d sockets, %d before the stalled clients came: they were not dropped", openSockets(t, pid), sockets)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if peak := memoryKiB(t, pid, "VmHWM"); peak-rss > 64<<10 {
		t.Errorf("runall's memory grew from %d KiB to a peak of %d KiB with %d stalled clients", rss, peak, stalled)
	}
	e.createFile("tick1")
	e.createFile("tick2")
	p.wait().wantCode(t, 0)
}

func httpGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := (&http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// openSockets counts the sockets a process holds open.
func openSockets(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

// memoryKiB is a line of /proc/PID/status in KiB: VmRSS (now), VmHWM (the peak).
func memoryKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// trialSeconds is how long each trial of a run took, as its results say.
func trialSeconds(t *testing.T, r resultsFile) []float64 {
	t.Helper()
	var out []float64
	for _, tr := range r.Tasks {
		start, end := wantTime(t, tr.Name+" start", tr.StartedAt), wantTime(t, tr.Name+" end", tr.FinishedAt)
		out = append(out, end.Sub(start).Seconds())
	}
	return out
}
