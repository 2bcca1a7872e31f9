package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// progressJSON is a task's progress as /api/run and results.json give it.
type progressJSON struct {
	Iter       float64 `json:"iter"`
	Of         float64 `json:"of"`
	Rate       float64 `json:"rate"`
	Unit       string  `json:"unit"`
	Source     string  `json:"source"`
	ETASeconds float64 `json:"eta_seconds"`
}

type progressRun struct {
	Tasks []struct {
		Name     string        `json:"name"`
		Status   string        `json:"status"`
		LogFile  string        `json:"log_file"`
		Progress *progressJSON `json:"progress"`
	} `json:"tasks"`
}

func (r progressRun) task(name string) (p *progressJSON, logFile string) {
	for _, t := range r.Tasks {
		if t.Name == name {
			return t.Progress, t.LogFile
		}
	}
	return nil, ""
}

// A trial's progress read from its output: a tqdm bar's n/total and it/s in /api/run while it
// runs, with its ETA; where each trial stopped in results.json; runall-progress lines, a
// wrong one said once. The bar's updates are in its log as it drew them, not a line each, and
// the plain output prints the bar twice (its first state and its last), not 41 times.
func TestProgressFromOutput(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	release := e.path("release")
	e.env = append(e.env, "PROGRESS_RELEASE="+release)
	p := e.start("--log-dir", "logs", "--results", "results.json", "--serve", "127.0.0.1:0", testdata("progress.yml"))
	url := served(p)
	var live *progressJSON
	eventually(t, "the bar at 20 of 40 in /api/run", func() bool {
		_, body := httpGet(t, url+"api/run")
		var run progressRun
		if json.Unmarshal(body, &run) != nil {
			return false
		}
		live, _ = run.task("bar")
		return live != nil && live.Iter == 20
	})
	if want := (progressJSON{Iter: 20, Of: 40, Rate: 4, Unit: "it", Source: "bar", ETASeconds: 5}); *live != want {
		t.Errorf("/api/run: bar's progress %+v, want %+v", *live, want)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	r.wantCode(t, 0)

	b, err := os.ReadFile(e.path("results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res progressRun
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	bar, logFile := res.task("bar")
	if bar == nil || *bar != (progressJSON{Iter: 40, Of: 40, Rate: 4, Unit: "it", Source: "bar"}) {
		t.Errorf("results.json: bar's progress %+v, want 40 of 40 at 4 it/s, no ETA", bar)
	}
	if steps, _ := res.task("steps"); steps == nil || steps.Iter != 4 || steps.Of != 4 || steps.Source != "runall-progress" {
		t.Errorf("results.json: steps' progress %+v, want 4 of 4 from runall-progress", steps)
	}
	if n := strings.Count(r.stdout, "iter=x is not a number"); n != 1 {
		t.Errorf("the wrong runall-progress line said %d times, want once\n%v", n, r)
	}
	if n := strings.Count(r.stdout, "/40 ["); n != 2 {
		t.Errorf("plain output printed the bar %d times, want 2 (its first state, its last)\n%v", n, r)
	}
	if !filepath.IsAbs(logFile) {
		logFile = filepath.Join(e.dir, logFile)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	_, drawn, _ := strings.Cut(string(log), "\n  0%|") // after runall's mark, which shows the command
	if states, lines := strings.Count(drawn, "/40 ["), strings.Count(drawn, "\n"); states != 41 || lines > 1 || !strings.Contains(drawn, "4.00it/s]\r 50%|") {
		t.Errorf("log: %d states of the bar on %d lines, want 41 redrawn with \\r on its one line\n%q", states, lines, log)
	}

	// --output json: progress events, the first of each trial at once (the release is there:
	// the bar runs through in less than the second between two).
	r = e.run("--log-dir", "logs", "--output", "json", testdata("progress.yml"))
	r.wantCode(t, 0)
	seen := map[string]bool{}
	for line := range strings.Lines(r.stdout) {
		var ev struct {
			Event    string        `json:"event"`
			Task     string        `json:"task"`
			Progress *progressJSON `json:"progress"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "progress" && ev.Progress != nil {
			seen[ev.Task+" "+ev.Progress.Source] = true
		}
	}
	if !seen["steps runall-progress"] || !seen["bar bar"] {
		t.Errorf("--output json: progress events of %v, want steps' runall-progress and bar's tqdm bar\n%v", seen, r)
	}
}

// The live page in a browser: a running trial's progress under its status and in the run's
// ETA, and its log showing the bar's newest state alone, not every state it drew.
func TestProgressOnThePage(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	release := e.path("release")
	e.env = append(e.env, "PROGRESS_RELEASE="+release)
	ctx := browser(t)
	p := e.start("--log-dir", "logs", "--serve", "127.0.0.1:0", testdata("progress.yml"))
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })
	url := served(p)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "the bar's progress under its status", pageJS+
		`status("bar") === "running" && row("bar").cells[2].textContent.includes("20/40 it · 4 it/s · 5.0s left") && document.body.textContent.includes("(from the running trials' progress")`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](pageJS+`row("bar").querySelector("a.log").click()`)); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "the bar's log at its newest state alone", `!document.getElementById("log").hidden && `+
		`document.querySelector("#log pre").textContent.includes("| 20/40 [") && !document.querySelector("#log pre").textContent.includes("| 19/40 [")`)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.wait().wantCode(t, 0)
}
