package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"
)

// The plots of a sweep (parallel coordinates, the contour, importance and the Pareto
// front) in a real browser, on the live page of a run on simulated GPUs.

// plotsJS are the helpers the conditions use: the plot data, where a value lies on an
// axis of the parallel coordinates, brushing one, and the table's rows shown.
const plotsJS = pageJS + `
function pc() { return document.querySelector("#parcoords canvas"); }
function plotData() { return JSON.parse(document.getElementById("plot-data").textContent); }
function trialStatus(name) { const d = plotData(), i = d.names.indexOf(name); return i === -1 ? "" : d.status[i]; }
function place(name, v) {
  const d = plotData(), a = d.axes.findIndex(x => x.name === name), ax = d.axes[a], cv = pc();
  const lay = JSON.parse(cv.getAttribute("data-layout")), b = cv.getBoundingClientRect(), k = b.width / cv.width;
  const f = ax.scale === "log" ? (Math.log10(v) - Math.log10(ax.lo)) / (Math.log10(ax.hi) - Math.log10(ax.lo)) : (v - ax.lo) / (ax.hi - ax.lo);
  return {clientX: b.left + lay.xs[a] * k, clientY: b.top + (lay.bottom - f * (lay.bottom - lay.top)) * k, bubbles: true};
}
function brush(name, lo, hi) {
  pc().dispatchEvent(new MouseEvent("mousedown", place(name, hi)));
  document.dispatchEvent(new MouseEvent("mousemove", place(name, lo)));
  document.dispatchEvent(new MouseEvent("mouseup", place(name, lo)));
}
function shownRows() { return rows().filter(r => !r.hidden).map(r => r.cells[1].getAttribute("data-v")).sort().join("|"); }
`

// TestPlotsInBrowser: a two-objective sweep followed on the live page. A trial still
// running is drawn as running, with its value so far; brushing lr's axis of the parallel
// coordinates leaves in the table only the trials within the range, and keeps it so as the
// page follows the run to its end, where the trial is drawn as finished; the importance
// bars are results.json's, the first front drawn is the one computed here by its
// definition, and clearing the range shows every trial again.
func TestPlotsInBrowser(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	ctx := browser(t)
	copyFile(t, testdata("serve/plots.yml"), e.path("plots.yml"))
	p := e.start("--log-dir", "logs", "--fake-gpus", "2x16GiB", "--serve", "127.0.0.1:0", "--serve-after", "3m", "plots.yml")
	t.Cleanup(func() { _ = os.WriteFile(e.path("tick"), nil, 0o644) })
	if err := chromedp.Do(ctx, chromedp.Navigate(served(p))); err != nil {
		t.Fatal(err)
	}
	const waiting = "lr=0.001 width=256 opt=adam"
	waitPage(ctx, t, "17 trials ended and one running", plotsJS+
		`plotData().status.filter(s => s === "ok").length === 17 && trialStatus("`+waiting+`") === "running"`)
	var kept []string // the trials with lr within [0.0008, 0.012]: 0.001 and 0.01
	for _, lr := range []string{"0.01", "0.001"} {
		for _, w := range []string{"16", "64", "256"} {
			for _, o := range []string{"sgd", "adam"} {
				kept = append(kept, "lr="+lr+" width="+w+" opt="+o)
			}
		}
	}
	slices.Sort(kept)
	want := strings.Join(kept, "|")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](plotsJS+`brush("lr", 0.0008, 0.012)`)); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "the table filtered to lr 0.001 and 0.01", plotsJS+`shownRows() === "`+want+`" && `+
		`document.querySelector("#parcoords .count").textContent === "12 of 18 trials in the ranges"`)
	wantKeptLayer(ctx, t)
	e.createFile("tick")
	waitPage(ctx, t, "the run's end, the range kept", plotsJS+`document.querySelector("#summary .st").textContent === "ok" && `+
		`trialStatus("`+waiting+`") === "ok" && shownRows() === "`+want+`" && document.getElementById("front") !== null`)
	shots := map[string][]byte{"report-parcoords.png": section(ctx, t, "parcoords")}
	var res objectivesOutcome
	if err := json.Unmarshal([]byte(e.read(filepath.Join("logs", "latest", "results.json"))), &res); err != nil {
		t.Fatal(err)
	}
	wantImportance(ctx, t, res)
	wantFront(ctx, t, res)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`document.querySelector("#parcoords .clear").click()`)); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "every trial again", plotsJS+`rows().filter(r => !r.hidden).length === 18 && document.querySelector("#parcoords .clear").hidden`)
	wantChoiceBrushed(ctx, t)
	wantContour(ctx, t, res)
	shots["report-contour.png"], shots["report-front.png"] = section(ctx, t, "contour"), section(ctx, t, "front")
	if *updateScreenshot {
		for name, b := range shots {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.signal(syscall.SIGTERM) // ends --serve-after
	p.wait().wantCode(t, 0)
}

// wantKeptLayer: a brushing draws the lines kept on a layer of their own over every line
// faded, so that it strokes those and nothing else: on lr's axis the kept layer has a line at
// 0.001 and none at 0.1 (outside the range), and the layer of every line is drawn whole.
func wantKeptLayer(ctx context.Context, t *testing.T) {
	t.Helper()
	waitPage(ctx, t, "the kept lines alone on their layer, every line under them faded", plotsJS+`(() => {
  const cvs = document.querySelectorAll("#parcoords canvas");
  if (cvs.length !== 4 || !cvs[1].classList.contains("faded")) { return false; }
  const lay = JSON.parse(pc().getAttribute("data-layout")), a = plotData().axes.findIndex(x => x.name === "lr");
  const drawn = (cv, v) => { const p = place("lr", v), b = pc().getBoundingClientRect(), k = cv.width / b.width;
    return cv.getContext("2d").getImageData(Math.round(lay.xs[a]) - 2, Math.round((p.clientY - b.top) * k) - 2, 5, 5).data.some((x, i) => i % 4 === 3 && x > 0); };
  return drawn(cvs[2], 0.001) && !drawn(cvs[2], 0.1) && drawn(cvs[1], 0.1);
})()`)
}

// wantChoiceBrushed: a range on a choice's axis keeps the trials of the choices within it
// (opt's axis lists adam, then sgd); a click on the axis clears it.
func wantChoiceBrushed(ctx context.Context, t *testing.T) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](plotsJS+`brush("opt", -0.2, 0.2)`)); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "the 9 trials with opt=adam", plotsJS+`rows().filter(r => !r.hidden).length === 9 && `+
		`rows().filter(r => !r.hidden).every(r => r.cells[1].getAttribute("data-v").endsWith("opt=adam"))`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](plotsJS+`pc().dispatchEvent(new MouseEvent("mousedown", place("opt", 0.5)));
		document.dispatchEvent(new MouseEvent("mouseup", place("opt", 0.5)))`)); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "every trial again, opt's range cleared by a click", plotsJS+`rows().filter(r => !r.hidden).length === 18 && `+
		`document.getElementById("parcoords").getAttribute("data-brushed") === "{}"`)
}

// wantImportance: each objective's bars on the page are results.json's importances, in
// its order.
func wantImportance(ctx context.Context, t *testing.T, res objectivesOutcome) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string][]string](`Object.fromEntries(Array.from(document.querySelectorAll("#importance figure")).map(f =>
		[f.getAttribute("data-metric"), Array.from(f.querySelectorAll("rect.imp")).map(r => r.getAttribute("data-param") + "=" + r.getAttribute("data-importance"))]))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"acc", "latency"} {
		var want []string
		for _, q := range res.Importance[m].Params {
			want = append(want, q.Name+"="+strconv.FormatFloat(q.Importance, 'g', -1, 64))
		}
		if len(want) != 3 || !slices.Equal(got[m], want) {
			t.Errorf("importance bars for %s: %v, results.json: %v", m, got[m], want)
		}
	}
}

// wantFront: the trials the page marks as the first front are those no other trial beats
// (acc as high, latency as low, one of them strictly), as results.json ranks them too.
func wantFront(ctx context.Context, t *testing.T, res objectivesOutcome) {
	t.Helper()
	var want, ranked []string
	for _, a := range res.Tasks {
		beaten := false
		for _, b := range res.Tasks {
			ma, mb := a.Metrics, b.Metrics
			beaten = beaten || mb["acc"] >= ma["acc"] && mb["latency"] <= ma["latency"] && (mb["acc"] > ma["acc"] || mb["latency"] < ma["latency"])
		}
		if !beaten {
			want = append(want, a.Name)
		}
		if a.ParetoRank == 1 {
			ranked = append(ranked, a.Name)
		}
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](plotsJS+`Array.from(document.querySelectorAll("#front circle.front")).map(c =>
		rows().find(r => r.getAttribute("data-task") === c.getAttribute("data-task")).cells[1].getAttribute("data-v"))`))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(ranked)
	slices.Sort(got)
	if len(want) < 2 || !slices.Equal(got, want) || !slices.Equal(ranked, want) {
		t.Errorf("the first front: the page marks %v, results.json ranks %v, by its definition %v", got, ranked, want)
	}
}

// wantContour: the contour draws the first objective over the two parameters most
// important for it, from every trial that succeeded.
func wantContour(ctx context.Context, t *testing.T, res objectivesOutcome) {
	t.Helper()
	imp := res.Importance["acc"].Params
	if len(imp) < 2 {
		t.Fatalf("importance for acc: %v", imp)
	}
	// The charts below the parallel coordinates are drawn again after the table answers.
	waitPage(ctx, t, "the contour of acc over "+imp[0].Name+" and "+imp[1].Name+" from 18 trials", `(() => {
		const s = document.getElementById("contour");
		return s.querySelector(".cx").value === "`+imp[0].Name+`" && s.querySelector(".cy").value === "`+imp[1].Name+`" &&
			s.getAttribute("data-points") === "18"; })()`)
}

// section is a screenshot of the page's element of that id alone.
func section(ctx context.Context, t *testing.T, id string) []byte {
	t.Helper()
	full, err := png.Decode(bytes.NewReader(screenshot(ctx, t)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const b = document.getElementById("`+id+`").getBoundingClientRect();
		return [b.left + scrollX, b.top + scrollY, b.right + scrollX, b.bottom + scrollY]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	sub := full.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(int(r[0]), int(r[1]), int(r[2]), int(r[3])))
	var b bytes.Buffer
	if err := png.Encode(&b, sub); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
