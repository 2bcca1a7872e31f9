package main_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// namesAsk is a sampler that hands out six trials whose parameters are named with a quote,
// a backslash, the start of an end tag, and characters the page shows as U+FFFD (a
// backspace, U+202E).
const namesAsk = `import fcntl, json
with open("asked", "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    n = len(f.read())
    f.write("x")
names = ['l"r', 'w\\d', '</bs', 'o\bpt\u202e']
print(json.dumps({"number": n, "params": {k: (n * 7 + 3 * i) % 10 / 10 + 0.05 for i, k in enumerate(names)}}))
`

// TestReportContourWithHostileNamesInBrowser (issue 42, point 7): the contour of report.html
// with parameters so named is drawn from every trial that succeeded, in a real browser, the
// page opened from disk; it was blank, the script finding no axis by the name the page held.
func TestReportContourWithHostileNamesInBrowser(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	ctx := browser(t)
	e.writeFile("ask.py", namesAsk)
	e.writeFile("tasks.yml", `config:
  objective: {metric: acc, mode: max}
tasks:
  - parallel-tasks:
      - name: t
        cmd: echo runall-metric acc=$((RUNALL_TASK_ID * 7 % 10))
        search: {ask: /usr/bin/python3 ask.py, tell: 'true'}
        trials: 6
`)
	e.run("--log-dir", "logs", "tasks.yml").wantCode(t, 0)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+e.path("logs", "latest", "report.html"))); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "the contour drawn from 6 trials", `(() => { const s = document.getElementById("contour");
		return s !== null && s.getAttribute("data-points") === "6"; })()`)
	// Each parameter chosen on either axis: the contour is drawn again from the 6 trials.
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const s = document.getElementById("contour"), out = [];
		for (const sel of s.querySelectorAll("select")) {
			for (const o of Array.from(sel.options)) {
				sel.value = o.value;
				s.removeAttribute("data-points");
				sel.dispatchEvent(new Event("change", {bubbles: true}));
				out.push(sel.className + " " + o.value + ": " + s.getAttribute("data-points"));
			}
		}
		return out; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(drawn) != 8 {
		t.Fatalf("the contour offers %q, want each of the 4 parameters on both axes", drawn)
	}
	for _, d := range drawn {
		if !strings.HasSuffix(d, ": 6") {
			t.Errorf("contour with %s points, want 6", d)
		}
	}
}
