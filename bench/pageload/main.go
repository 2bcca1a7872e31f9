// Command pageload measures how long headless Chromium takes to load and draw report pages:
// from the navigation's start to the second animation frame after its load event (the page
// parsed, its script run, laid out and painted once). It loads the pages given in turn,
// ROUNDS times each, and prints each one's median (see docs/benchmarks.md, the report).
// With -brush, it also times brushing on the parallel coordinates once each page is drawn:
// a range dragged along the first axis, from the mouse's release to the second animation
// frame after it (the table, the charts and the canvases redrawn and painted). -shot DIR
// keeps a screenshot of each page as its last round left it; -trace DIR a trace of each page's
// last brushing (trace.go), to open in DevTools' Performance panel.
//
//	go run ./bench/pageload -rounds 5 -brush base.html live.html
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/chromedp/chromedp"
)

const drawn = `new Promise(r => {
  const done = () => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now())));
  const sec = document.getElementById("parcoords");
  const poll = () => !sec || sec.getAttribute("data-drawn") ? done() : setTimeout(poll, 2);
  poll();
})`

// brush drags along the parallel coordinates' first axis, over its middle third, and
// resolves with the milliseconds from the release to the second frame after it (the table
// and the parallel coordinates answered), and to the second frame after every other chart
// was drawn again; -1 when the page has no parallel coordinates.
const brush = `new Promise(r => {
  const cv = document.querySelector("#parcoords canvas");
  if (!cv) { r([-1, -1]); return; }
  const lay = JSON.parse(cv.getAttribute("data-layout")), b = cv.getBoundingClientRect(), k = b.width / cv.width;
  const x = b.left + lay.xs[0] * k, y = f => b.top + (lay.bottom - f * (lay.bottom - lay.top)) * k;
  const ev = (type, f) => new MouseEvent(type, {bubbles: true, clientX: x, clientY: y(f)});
  cv.dispatchEvent(ev("mousedown", 0.33));
  document.dispatchEvent(ev("mousemove", 0.66));
  const t0 = performance.now();
  const sec = document.getElementById("parcoords"), gen = sec.getAttribute("data-drawn");
  document.dispatchEvent(ev("mouseup", 0.66));
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const answered = performance.now() - t0;
    const poll = () => sec.getAttribute("data-drawn") !== gen ?
      requestAnimationFrame(() => requestAnimationFrame(() => r([answered, performance.now() - t0]))) : setTimeout(poll, 2);
    poll();
  }));
})`

func main() {
	rounds := flag.Int("rounds", 5, "loads of each page")
	brushing := flag.Bool("brush", false, "time brushing the parallel coordinates too")
	shots := flag.String("shot", "", "a directory to keep a screenshot (JPEG) of each page in")
	traces := flag.String("trace", "", "a directory to keep a trace of each page's last brushing in (with -brush)")
	flag.Parse()
	path, err := exec.LookPath("chromium")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pageload: no chromium:", err)
		os.Exit(1)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	times, brushes, settled := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	for range *rounds {
		for _, page := range flag.Args() {
			ms, two, err := load(ctx, page, *brushing, *shots, *traces)
			if err != nil {
				fmt.Fprintln(os.Stderr, "pageload:", err)
				os.Exit(1)
			}
			times[page] = append(times[page], ms)
			if two != nil {
				brushes[page], settled[page] = append(brushes[page], two[0]), append(settled[page], two[1])
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, page := range flag.Args() {
		say(page, times[page], brushes[page], settled[page])
	}
}

// load loads a page once: how long it took to draw, and with brushing how long the
// brushing took to answer and to draw every chart.
func load(ctx context.Context, page string, brushing bool, shots, traces string) (float64, []float64, error) {
	abs, _ := filepath.Abs(page)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs)); err != nil {
		return 0, nil, err
	}
	ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](drawn, chromedp.EvalAwaitPromise))
	if err != nil {
		return 0, nil, err
	}
	var two []float64
	if brushing {
		run := func() (err error) {
			two, err = chromedp.Run(ctx, chromedp.Evaluate[[]float64](brush, chromedp.EvalAwaitPromise))
			return err
		}
		if traces != "" {
			var trace []byte
			if trace, err = traced(ctx, run); err == nil {
				err = os.WriteFile(filepath.Join(traces, filepath.Base(page)+".trace.json"), trace, 0o644)
			}
		} else {
			err = run()
		}
		if err != nil {
			return 0, nil, err
		}
	}
	if shots != "" {
		jpeg, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
		if err == nil {
			err = os.WriteFile(filepath.Join(shots, filepath.Base(page)+".jpg"), jpeg, 0o644)
		}
		if err != nil {
			return 0, nil, err
		}
	}
	return ms, two, nil
}

func say(page string, t, b, all []float64) {
	slices.Sort(t)
	fi, _ := os.Stat(page)
	fmt.Printf("%s (%d KiB): median %.0f ms, min %.0f, max %.0f over %d loads\n", page, fi.Size()>>10, t[len(t)/2], t[0], t[len(t)-1], len(t))
	if len(b) > 0 {
		slices.Sort(b)
		slices.Sort(all)
		fmt.Printf("  brushing: the table and the parallel coordinates: median %.0f ms, min %.0f, max %.0f; every chart: median %.0f ms, min %.0f, max %.0f\n",
			b[len(b)/2], b[0], b[len(b)-1], all[len(all)/2], all[0], all[len(all)-1])
	}
}
