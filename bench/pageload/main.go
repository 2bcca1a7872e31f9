// Command pageload measures how long headless Chromium takes to load and draw report pages:
// from the navigation's start to the second animation frame after its load event (the page
// parsed, its script run, laid out and painted once). It loads the pages given in turn,
// ROUNDS times each, and prints each one's median (see docs/benchmarks.md, the report).
//
//	go run ./bench/pageload -rounds 5 base.html live.html
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

const drawn = `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))`

func main() {
	rounds := flag.Int("rounds", 5, "loads of each page")
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
	times := map[string][]float64{}
	for range *rounds {
		for _, page := range flag.Args() {
			abs, _ := filepath.Abs(page)
			if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs)); err != nil {
				fmt.Fprintln(os.Stderr, "pageload:", err)
				os.Exit(1)
			}
			ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](drawn, chromedp.EvalAwaitPromise))
			if err != nil {
				fmt.Fprintln(os.Stderr, "pageload:", err)
				os.Exit(1)
			}
			times[page] = append(times[page], ms)
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, page := range flag.Args() {
		t := times[page]
		slices.Sort(t)
		fi, _ := os.Stat(page)
		fmt.Printf("%s (%d KiB): median %.0f ms, min %.0f, max %.0f over %d loads\n", page, fi.Size()>>10, t[len(t)/2], t[0], t[len(t)-1], len(t))
	}
}
