// Command livefollow follows a run's live page (runall --serve) with N clients that do what
// the page's script does: fetch the page, follow its event stream, and fetch the page again
// at each version they do not show, until the page shows the run ended. It prints what
// they fetched (see docs/benchmarks.md, the live server; bench/serve.py runs it).
//
//	go run ./bench/livefollow -n 50 http://127.0.0.1:9090/
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

var (
	versionRE = regexp.MustCompile(` data-live="(\d+)"`)
	endedRE   = regexp.MustCompile(`<header id="summary">\s*<h1>[^<]*</h1>\s*<p class="meta">.*?<span class="st (\w+)">`)
)

type follower struct {
	pages, versions int
	bytes           int64
	err             error
}

func (f *follower) page(client *http.Client, url string) (version string, ended bool) {
	resp, err := client.Get(url)
	if err != nil {
		f.err = err
		return "", false
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		f.err = fmt.Errorf("page: %s %v", resp.Status, err)
		return "", false
	}
	f.pages++
	f.bytes += int64(len(b))
	v := versionRE.FindSubmatch(b)
	m := endedRE.FindSubmatch(b)
	if v == nil {
		return "", true // a page that follows nothing: the run's last
	}
	return string(v[1]), m != nil && string(m[1]) != "running"
}

func (f *follower) follow(url string) {
	client := &http.Client{Timeout: time.Minute}
	shown, ended := f.page(client, url)
	if f.err != nil || ended {
		return
	}
	resp, err := http.Get(url + "api/events")
	if err != nil {
		f.err = err
		return
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			f.err = fmt.Errorf("the event stream ended before the run: %w", err)
			return
		}
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		f.versions++
		if v != shown {
			if shown, ended = f.page(client, url); f.err != nil || ended {
				return
			}
		}
	}
}

func main() {
	n := flag.Int("n", 50, "how many clients follow the page")
	flag.Parse()
	if flag.NArg() != 1 || !strings.HasSuffix(flag.Arg(0), "/") {
		fmt.Fprintln(os.Stderr, "usage: livefollow [-n N] http://HOST:PORT/")
		os.Exit(2)
	}
	fs := make([]follower, *n)
	var wg sync.WaitGroup
	for i := range fs {
		wg.Go(func() { fs[i].follow(flag.Arg(0)) })
	}
	wg.Wait()
	var pages, versions int
	var bytes int64
	failed := 0
	for _, f := range fs {
		pages, versions, bytes = pages+f.pages, versions+f.versions, bytes+f.bytes
		if f.err != nil {
			failed++
			fmt.Fprintln(os.Stderr, "livefollow:", f.err)
		}
	}
	fmt.Printf("%d followers: %d pages (%.1f MiB), %d versions told, %d failed\n", *n, pages, float64(bytes)/(1<<20), versions, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
