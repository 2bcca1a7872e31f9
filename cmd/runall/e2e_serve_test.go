package main_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The live page (--serve) in a real browser: Debian's chromium, headless, driven by
// chromedp, against runs on simulated GPUs.

var updateScreenshot = flag.Bool("update-screenshot", false, "write docs/live-report.png, the README's picture of the live page, from TestLivePageInBrowser")

// chromium finds the browser; without one the browser tests skip, except in CI, where
// .ci/run installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium: .ci/run installs Debian's chromium for the browser tests")
	}
	t.Skip("no chromium: install it (apt-get install chromium) to run the browser tests")
	return ""
}

// browser starts a headless chromium for the test; it ends with it.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.WindowSize(1280, 1100),
		chromedp.Flag("hide-scrollbars", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, cmdTimeout)
	t.Cleanup(func() {
		cancelTime()
		cancel()
		cancelAlloc()
	})
	return ctx
}

// served waits for runall to say where it serves, and returns the page's URL.
func served(p *proc) string {
	p.t.Helper()
	p.waitOutput("serving the live report on http://")
	m := regexp.MustCompile(`serving the live report on (http://\S+/)`).FindStringSubmatch(p.stdout.String())
	if m == nil {
		p.t.Fatalf("no address in runall's output:\n%s", p.stdout)
	}
	return m[1]
}

// waitPage waits until the page's JavaScript expression cond holds.
func waitPage(ctx context.Context, t *testing.T, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("gave up waiting for the page to show %s; it shows:\n%s", what, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pageJS are the helpers the conditions use: a trial's status by name, and how many
// points its curve has.
const pageJS = `
function rows() { return Array.from(document.querySelectorAll("#trials tbody tr")); }
function rowNames() { return rows().map(r => r.cells[1].getAttribute("data-v")); }
function row(name) { return rows().find(r => r.cells[1].getAttribute("data-v") === name); }
function status(name) { const r = row(name); return r ? r.cells[2].getAttribute("data-v") : ""; }
function curve(name) { const r = row(name); return r ? document.querySelector('#curves [data-task="' + r.getAttribute("data-task") + '"]') : null; }
function points(name) {
  const c = curve(name);
  if (!c) return 0;
  return c.tagName === "circle" ? 1 : c.getAttribute("points").trim().split(/\s+/).length;
}
`

func screenshot(ctx context.Context, t *testing.T) []byte {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	return png
}

// TestLivePageInBrowser: the page follows the run without reloading: between two
// screenshots mid-run a running trial's curve grew and a waiting trial started; once the
// run ended the page is report.html, to the byte as served and part by part as shown. A
// second tab, where the user sorted the table, hovers a trial and reads its log, keeps all
// three across the updates, and a trial's hostile name and output stay text.
func TestLivePageInBrowser(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = append(e.env, "LIVE_TEST_TOKEN=s3cr3t-value")
	ctx := browser(t)
	copyFile(t, testdata("serve/sweep.yml"), e.path("tasks.yml")) // the page's title is the file as given
	p := e.start("--log-dir", "logs", "--fake-gpus", "2x16GiB", "--serve", "127.0.0.1:0", "--serve-after", "3m", "tasks.yml")
	t.Cleanup(func() { _ = os.WriteFile(e.path("tick1"), nil, 0o644); _ = os.WriteFile(e.path("tick2"), nil, 0o644) })
	url := served(p)
	user, cancel := chromedp.NewContext(ctx) // the second tab
	defer cancel()
	for _, tab := range []context.Context{ctx, user} {
		if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tab, chromedp.Evaluate[any](`window.runallNoReload = "still here"`)); err != nil {
			t.Fatal(err)
		}
		waitPage(tab, t, "two trials running with two epochs, two waiting", pageJS+
			`status("lr=0.1") === "running" && points("lr=0.1") === 2 && points("lr=0.03") === 2 && status("lr=0.01") === "pending"`)
	}
	before := screenshot(ctx, t)
	sortHoverAndRead(user, t)

	e.createFile("tick1") // lr=0.1 ends; lr=0.03's curve grows; lr=0.01 starts
	const grown = `points("lr=0.03") === 3 && status("lr=0.1") === "ok" && status("lr=0.01") === "running"`
	waitPage(ctx, t, "lr=0.03's third epoch and lr=0.01 started", pageJS+grown)
	after := screenshot(ctx, t)
	if bytes.Equal(before, after) {
		t.Errorf("the two screenshots mid-run are the same")
	}
	waitPage(user, t, "the update, sorted by lr as the user sorted, lr=0.03 marked, its log grown", pageJS+grown+
		` && rowNames().join() === "lr=0.003,lr=0.01,lr=0.03,lr=0.1,<img src=x onerror=\"window.pwned=1\">"`+
		` && document.querySelector('th[data-key="param lr"]').getAttribute("aria-sort") === "ascending"`+
		` && curve("lr=0.03").classList.contains("hl") && document.querySelector("#log pre").textContent.includes("epoch 3")`)
	if *updateScreenshot {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "live-report.png"), screenshot(user, t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantHostileIsText(user, t)
	for _, tab := range []context.Context{ctx, user} {
		if still, err := chromedp.Run(tab, chromedp.Evaluate[string](`window.runallNoReload`)); err != nil || still != "still here" {
			t.Errorf("the page reloaded: a value it was given is gone (%q, %v)", still, err)
		}
	}

	e.createFile("tick2")
	waitPage(ctx, t, "the run's end", pageJS+`document.querySelector("#summary .st").textContent === "ok" && status("lr=0.003") === "ok"`)
	wantFinalIsReport(ctx, t, e, url)
	if still, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.runallNoReload`)); err != nil || still != "still here" {
		t.Errorf("the page reloaded before the run's end: %q, %v", still, err)
	}
	p.signal(syscall.SIGTERM) // ends --serve-after
	p.wait().wantCode(t, 0)
}

// sortHoverAndRead is what a user does in a tab: sort the table by lr, rest the pointer on
// lr=0.03 and open its log, which shows its output so far.
func sortHoverAndRead(tab context.Context, t *testing.T) {
	t.Helper()
	if _, err := chromedp.Run(tab, chromedp.Evaluate[any](pageJS+`
		document.querySelector('th[data-key="param lr"]').click();
		row("lr=0.03").dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
		row("lr=0.03").querySelector("a.log").click();`)); err != nil {
		t.Fatal(err)
	}
	waitPage(tab, t, "lr=0.03 marked and its log", pageJS+
		`curve("lr=0.03").classList.contains("hl") && !document.getElementById("log").hidden && document.querySelector("#log pre").textContent.includes("epoch 2")`)
}

// wantHostileIsText: the setup step's name and output, HTML that would run script, are
// shown as text, in the table and in its log, and run nothing; its secret is masked.
func wantHostileIsText(tab context.Context, t *testing.T) {
	t.Helper()
	const name = `<img src=x onerror="window.pwned=1">`
	if _, err := chromedp.Run(tab, chromedp.Evaluate[any](pageJS+`row(`+strconv.Quote(name)+`).querySelector("a.log").click()`)); err != nil {
		t.Fatal(err)
	}
	waitPage(tab, t, "the hostile step's log", `document.querySelector("#log pre").textContent.includes("token: ****")`)
	got, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[String(window.pwned), document.querySelector("#log pre").textContent,
		document.querySelector("#log .name").textContent, String(document.querySelectorAll("#trials img, #log img, #log script").length)]`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "undefined" || !strings.Contains(got[1], `<script>window.pwned=2</script>`) || got[2] != name || got[3] != "0" {
		t.Errorf("the hostile step ran or was not shown as text: pwned %s, log %q, name %q, elements %s", got[0], got[1], got[2], got[3])
	}
	if strings.Contains(got[1], "s3cr3t-value") {
		t.Errorf("the log shows the secret: %q", got[1])
	}
}

// wantFinalIsReport: the page runall serves once the run ended is the report.html it wrote
// but for its version, and the page a browser followed shows the same parts as that file.
func wantFinalIsReport(ctx context.Context, t *testing.T, e *e2e, url string) {
	t.Helper()
	file := e.path("logs", "latest", "report.html")
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(page, written) {
		t.Errorf("the page served after the run is not report.html to the byte")
	}
	const parts = `JSON.stringify(["summary", "trials", "timeline", "curves", "params"].map(id => document.getElementById(id).outerHTML))`
	followed, err := chromedp.Run(ctx, chromedp.Evaluate[string](parts))
	if err != nil {
		t.Fatal(err)
	}
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate("file://"+file)); err != nil {
		t.Fatal(err)
	}
	opened, err := chromedp.Run(tab, chromedp.Evaluate[string](parts))
	if err != nil {
		t.Fatal(err)
	}
	if followed != opened {
		t.Errorf("the page followed to the end differs from report.html opened from disk:\n%s\n--- report.html:\n%s", followed, opened)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestServeFlags: --serve-after needs something served; --serve and its old name
// --metrics-addr are one server; RUNALL_SERVE serves as --serve does.
func TestServeFlags(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--serve-after", "1m"}, "--serve-after 1m0s: nothing is served; add --serve ADDR (or set RUNALL_SERVE)"},
		{[]string{"--serve", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:1"}, "they are one server"},
		{[]string{"--serve", "127.0.0.1:0", "--serve-after", "-1s"}, "--serve-after -1s: want a duration of 0 or more"},
		{[]string{"--serve-hosts", "runall.ml.svc"}, "--serve-hosts runall.ml.svc: nothing is served; add --serve ADDR"},
	} {
		r := e.run(append(tc.args, testdata("ok.yml"))...)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: stderr does not say %q\n%v", tc.args, tc.want, r)
		}
	}
	e.env = append(e.env, "RUNALL_SERVE=127.0.0.1:0")
	r := e.run("--log-dir", "logs", testdata("ok.yml"))
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "serving the live report on http://127.0.0.1:") {
		t.Errorf("RUNALL_SERVE served nothing:\n%v", r)
	}
	busy := e.withEnv("RUNALL_SERVE_HOSTS=runall.ml.svc").start("--log-dir", "logs", "--serve", "127.0.0.1:0", "--serve-after", "1m", testdata("ok.yml"))
	url := served(busy)
	taken := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	for host, want := range map[string]int{"runall.ml.svc": 200, "evil.example": 403, taken: 200} {
		req, _ := http.NewRequest("GET", url+"api/run", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s with RUNALL_SERVE_HOSTS=runall.ml.svc: %d, want %d", host, resp.StatusCode, want)
		}
	}
	r = e.run("--log-dir", "logs", "--serve", taken, testdata("ok.yml"))
	r.wantCode(t, 1)
	if !strings.Contains(r.stdout+r.stderr, "--serve "+taken+": listen tcp") {
		t.Errorf("an address in use: %v", r)
	}
	busy.signal(syscall.SIGTERM)
	busy.wait().wantCode(t, 0)
}
