package main_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"
)

// The demo (runall demo, examples/demo.yml) in a real browser: what a newcomer sees first.

// demoOutcome is what the demo's checks read of its results.json.
type demoOutcome struct {
	Best       string `json:"best"`
	Importance map[string]struct {
		Params []struct {
			Name       string  `json:"name"`
			Importance float64 `json:"importance"`
		} `json:"params"`
	} `json:"importance"`
	Tasks []demoTask `json:"tasks"`
}

// demoTask is a task of the demo's results.json.
type demoTask struct {
	Name          string               `json:"name"`
	Status        string               `json:"status"`
	Devices       []string             `json:"devices"`
	Params        map[string]string    `json:"params"`
	Metrics       map[string]float64   `json:"metrics"`
	MetricSeries  map[string][]float64 `json:"metric_series"`
	GPUMemory     uint64               `json:"gpu_memory"`
	PeakGPUMemory uint64               `json:"peak_gpu_memory"`
}

// TestDemoInBrowser: runall demo --serve serves its live page at an address of its own, which
// its output gives, and the page shows a trial
// running with its curve and its tqdm progress so far; at the end every view of the report
// is drawn with the run's data: the trials ranked by val_accuracy with the pruned ones
// (asha) after them, the timeline of both GPUs with their memory, the curves per epoch, the
// parallel coordinates, the plots against each hyperparameter, the contour and the
// importances, which name lr. With -update-screenshot it writes docs/demo-report.png, the
// README's first picture, from the report.html the demo wrote.
func TestDemoInBrowser(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	ctx := browser(t)
	p := e.start("demo", "--serve", "--output", "plain", "--log-dir", "logs", "--serve-after", "3m") // an address of its own
	url := served(p)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitPage(ctx, t, "a trial running with its curve and its tqdm bar's progress so far", pageJS+`rows().some(r =>
		r.cells[2].getAttribute("data-v") === "running" && points(r.cells[1].getAttribute("data-v")) >= 2 &&
		/\d+\/160 it · .* it\/s/.test(r.cells[2].textContent))`)
	waitPage(ctx, t, "the run's end", `document.querySelector("#summary .st").textContent === "ok"`)
	var res demoOutcome
	if err := json.Unmarshal([]byte(e.read(filepath.Join("logs", "latest", "results.json"))), &res); err != nil {
		t.Fatal(err)
	}
	wantDemoRanked(ctx, t, res)
	wantDemoTimeline(ctx, t, res)
	wantDemoCurves(ctx, t, res)
	wantDemoPlots(ctx, t, res)
	wantFinalIsReport(ctx, t, e, url)
	if *updateScreenshot {
		demoScreenshot(ctx, t, e.path("logs", "latest", "report.html"))
	}
	p.signal(syscall.SIGTERM) // ends --serve-after
	p.wait().wantCode(t, 0)
}

// wantDemoOutcome: the demo's trials reported val_accuracy, which ranks them; asha pruned
// some; the importances name lr first; each trial held its GPU memory.
func wantDemoOutcome(t *testing.T, e *e2e) {
	t.Helper()
	var res demoOutcome
	if err := json.Unmarshal([]byte(e.read(".runall/logs/latest/results.json")), &res); err != nil {
		t.Fatal(err)
	}
	status := map[string]int{}
	for _, tk := range res.Tasks {
		if tk.Params == nil {
			continue
		}
		status[tk.Status]++
		if _, ok := tk.Metrics["val_accuracy"]; !ok || tk.Status == "ok" && tk.PeakGPUMemory != tk.GPUMemory {
			t.Errorf("%s: %s, metrics %v, peak %d of its %d bytes: want val_accuracy, and its need held once it ended ok", tk.Name, tk.Status, tk.Metrics, tk.PeakGPUMemory, tk.GPUMemory)
		}
	}
	imp := res.Importance["val_accuracy"].Params
	if status["ok"] < 9 || status["pruned"] == 0 || res.Best == "" || len(imp) != 2 || imp[0].Name != "lr" {
		t.Errorf("the demo's trials %v, best %q, importance %v: want the grid's 9 ok and more, some pruned, a best, lr first", status, res.Best, imp)
	}
}

// wantDemoRanked: the table lists the trials that succeeded best first by val_accuracy, the
// best starred, then the pruned ones; the demo's asha stopped some and let some finish.
func wantDemoRanked(ctx context.Context, t *testing.T, res demoOutcome) {
	t.Helper()
	var ok []demoTask
	pruned := 0
	for _, tk := range res.Tasks {
		switch {
		case tk.Status == "ok" && tk.Params != nil:
			ok = append(ok, tk)
		case tk.Status == "pruned":
			pruned++
		}
	}
	slices.SortStableFunc(ok, func(a, b demoTask) int { return cmp.Compare(b.Metrics["val_accuracy"], a.Metrics["val_accuracy"]) })
	var want []string
	for _, tk := range ok {
		want = append(want, tk.Name)
	}
	if len(ok) < 9 || pruned == 0 || res.Best != want[0] {
		t.Fatalf("the demo's results: %d trials ok, %d pruned, best %q (by val_accuracy %q): want the grid's 9 and more, some pruned", len(ok), pruned, res.Best, want)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](pageJS+`rowNames().filter(n => status(n) === "ok" && n.startsWith("lr="))
		.concat([row(rowNames()[0]).cells[1].textContent.includes("\u2605") ? "starred" : "not starred",
			String(rowNames().filter(n => status(n) === "pruned").length)])`))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "starred", strconv.Itoa(pruned))
	if !slices.Equal(got, want) {
		t.Errorf("the table's trials that succeeded, the first's star, the pruned: %q\nwant ranked by val_accuracy: %q", got, want)
	}
}

// wantDemoTimeline: each of the two GPUs has its trials' bars, the pruned ones among them,
// over the shaded memory runall sampled; every trial on a GPU has its bar.
func wantDemoTimeline(ctx context.Context, t *testing.T, res demoOutcome) {
	t.Helper()
	want := map[string]int{}
	for _, tk := range res.Tasks {
		if len(tk.Devices) > 0 {
			want[tk.Status]++
		}
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]int](`(() => {
		const rows = Array.from(document.querySelectorAll("#timeline g.gpu-row"));
		const drawn = p => p && p.getAttribute("d").split(/[ML]/).filter(x => x.trim()).length;
		return {gpus: rows.length, ok: document.querySelectorAll("#timeline g.gpu-row rect.bar.ok").length,
			pruned: document.querySelectorAll("#timeline g.gpu-row rect.bar.pruned").length,
			memory: rows.filter(r => drawn(r.querySelector("path.mem")) > 2).length}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if w := map[string]int{"gpus": 2, "ok": want["ok"], "pruned": want["pruned"], "memory": 2}; !maps.Equal(got, w) || w["pruned"] == 0 {
		t.Errorf("the timeline draws %v, want %v (each GPU with its memory drawn)", got, w)
	}
}

// wantDemoCurves: a curve per trial that reported val_accuracy more than once, the best's
// drawn thick over its 8 epochs, and a point for each pruned at its first epoch.
func wantDemoCurves(ctx context.Context, t *testing.T, res demoOutcome) {
	t.Helper()
	lines, points := 0, 0
	for _, tk := range res.Tasks {
		switch n := len(tk.MetricSeries["val_accuracy"]); {
		case n > 1:
			lines++
		case n == 1 || tk.Metrics["val_accuracy"] != 0:
			points++
		}
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.querySelectorAll("#curves polyline.curve").length,
		document.querySelectorAll("#curves circle.curve").length,
		document.querySelector("#curves polyline.curve.best").getAttribute("points").trim().split(/\s+/).length]`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{lines, points, 8}; !slices.Equal(got, want) || points == 0 {
		t.Errorf("curves, points, the best's epochs: %v, want %v", got, want)
	}
}

// wantDemoPlots: the parallel coordinates draw every trial with a value across lr, width and
// val_accuracy; the plots against each hyperparameter and the contour have their points;
// the importance bars are results.json's, lr first.
func wantDemoPlots(ctx context.Context, t *testing.T, res demoOutcome) {
	t.Helper()
	var withValue, ok int
	for _, tk := range res.Tasks {
		if _, has := tk.Metrics["val_accuracy"]; has {
			withValue++
			if tk.Status == "ok" {
				ok++
			}
		}
	}
	var imp []string
	for _, q := range res.Importance["val_accuracy"].Params {
		imp = append(imp, q.Name+"="+strconv.FormatFloat(q.Importance, 'g', -1, 64))
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](plotsJS+`(() => {
		const all = document.querySelector("#parcoords canvas.all"), px = all.getContext("2d").getImageData(0, 0, all.width, all.height).data;
		let inked = 0; for (let i = 3; i < px.length; i += 4) { if (px[i] > 0) inked++; }
		return [plotData().names.length + " trials on " + plotData().axes.map(a => a.name).join(","), inked > 2000 ? "drawn" : "blank " + inked,
			Array.from(document.querySelectorAll("#params svg.scatter")).map(s => s.getAttribute("data-param") + ":" + s.querySelectorAll("circle.pt").length).join(","),
			document.getElementById("contour").getAttribute("data-points")].concat(
			Array.from(document.querySelectorAll('#importance figure[data-metric="val_accuracy"] rect.imp')).map(r => r.getAttribute("data-param") + "=" + r.getAttribute("data-importance")));
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	n := strconv.Itoa(withValue)
	want := append([]string{n + " trials on lr,width,val_accuracy", "drawn", "lr:" + n + ",width:" + n, strconv.Itoa(ok)}, imp...)
	if !slices.Equal(got, want) || len(imp) != 2 || !strings.HasPrefix(imp[0], "lr=") {
		t.Errorf("the plots draw %q\nwant %q (importance naming lr first)", got, want)
	}
}

// demoScreenshot writes docs/demo-report.png: the report the demo wrote, opened from disk,
// from its top to the end of the curves.
func demoScreenshot(ctx context.Context, t *testing.T, report string) {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1140, 1000), chromedp.Navigate("file://"+report)); err != nil {
		t.Fatal(err)
	}
	// As wide as the table of trials, which scrolls within its frame where the page is narrower.
	width, err := chromedp.Run(tab, chromedp.Evaluate[int64](`Math.max(document.documentElement.scrollWidth,
		document.querySelector("#trials table").scrollWidth + 56)`))
	if err == nil {
		err = chromedp.Do(tab, chromedp.EmulateViewport(max(width, 1140), 1000))
	}
	if err != nil {
		t.Fatal(err)
	}
	full, err := png.Decode(bytes.NewReader(screenshot(tab, t)))
	if err != nil {
		t.Fatal(err)
	}
	bottom, err := chromedp.Run(tab, chromedp.Evaluate[float64](`document.getElementById("curves").getBoundingClientRect().bottom + scrollY`))
	if err != nil {
		t.Fatal(err)
	}
	top := full.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(0, 0, full.Bounds().Dx(), int(bottom)+8))
	var b bytes.Buffer
	if err := png.Encode(&b, top); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "demo-report.png"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFakeTrain: the demo's trainer prints Keras's epoch lines and saves its epoch; a
// mistake in its flags is a usage error; its --memory beyond the GPU fails as PyTorch does,
// and ends the training with exit 1.
func TestFakeTrain(t *testing.T) {
	t.Parallel()
	e := newGPUE2E(t)
	e.env = append(e.env, "RUNALL_FAKE_GPUS=8GiB", "CUDA_VISIBLE_DEVICES=0")
	r := e.runGPU("fake-train", "--lr", "0.01", "--width", "64", "--epochs", "2", "--batches", "2", "--batch-time", "1ms",
		"--checkpoint", "ck", "--memory", "1GiB", "--ramp", "0")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "Epoch 2/2\n2/2 - ") || !strings.Contains(r.stdout, " - val_accuracy: ") || e.read("ck/model.ckpt") != "epoch 2\n" {
		t.Errorf("fake-train did not train two epochs and save the second\n%v", r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--width", "64"}, "learning rate 0: want more than 0"},
		{[]string{"--lr", "0.1", "--width", "64", "--memory", "lots"}, `--memory "lots": want a size`},
		{[]string{"--lr", "0.1", "--width", "64", "extra"}, `unexpected argument "extra"`},
		{[]string{"--lr", "0.1", "--width", "64", "--hang-print"}, "printing while hung needs a step to hang after"},
		{[]string{"--lr", "0.1", "--width", "64", "--slow-from", "3", "--slow-by", "0.5"}, "want a factor of 1 or more"},
	} {
		r := e.runGPU(append([]string{"fake-train"}, tc.args...)...)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("fake-train %q: stderr does not say %q\n%v", tc.args, tc.want, r)
		}
	}
	r = e.runGPU("fake-train", "--lr", "0.1", "--width", "64", "--epochs", "1000", "--memory", "9GiB", "--ramp", "0")
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ") {
		t.Errorf("memory beyond the GPU does not fail as PyTorch does\n%v", r)
	}
}

// TestFlagsBeforeCommand: a command named after run's flags is read as the task file to
// run; where no such file exists, the error says where the command's flags go. A missing
// file named otherwise gets no such hint.
func TestFlagsBeforeCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("--fresh", "demo")
	r.wantCode(t, 2)
	if !strings.Contains(r.stderr, "demo is a command: its flags go after it, as in runall demo --help") {
		t.Errorf("runall --fresh demo: stderr does not say where demo's flags go\n%v", r)
	}
	r = e.run("missing.yml", "demo")
	r.wantCode(t, 2)
	if strings.Contains(r.stderr, "is a command") {
		t.Errorf("runall missing.yml demo: a hint for a task argument\n%v", r)
	}
}
