package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runall/runall/live"
	"github.com/runall/runall/runner"
)

// newServer makes the run's live server when asked: --serve, its alias --metrics-addr, or
// RUNALL_SERVE; nil when none is.
func newServer(o runOptions, getenv func(string) string) (*live.Server, error) {
	addr := o.serve
	switch {
	case addr != "" && o.metricsAddr != "" && addr != o.metricsAddr:
		return nil, usagef("--serve %s and --metrics-addr %s: they are one server (--metrics-addr is --serve's old name); give one address", addr, o.metricsAddr)
	case addr == "":
		addr = o.metricsAddr
	}
	if addr == "" {
		addr = getenv("RUNALL_SERVE")
	}
	hosts := cmp.Or(o.serveHosts, getenv("RUNALL_SERVE_HOSTS"))
	switch {
	case o.serveAfter < 0:
		return nil, usagef("--serve-after %v: want a duration of 0 or more", o.serveAfter)
	case addr == "" && o.serveAfter > 0:
		return nil, usagef("--serve-after %v: nothing is served; add --serve ADDR (or set RUNALL_SERVE)", o.serveAfter)
	case addr == "" && o.serveHosts != "":
		return nil, usagef("--serve-hosts %s: nothing is served; add --serve ADDR (or set RUNALL_SERVE)", o.serveHosts)
	case addr == "":
		return nil, nil
	}
	var names []string
	for _, n := range strings.Split(hosts, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return live.New(live.Options{Addr: addr, Hosts: names}), nil
}

// serveAfter keeps serving the finished run for d, or until a signal, unless a signal
// ended the run: then runall was asked to stop, and stops.
func serveAfter(srv *live.Server, d time.Duration, runErr error, sigs <-chan os.Signal, a *app) {
	var interrupted *runner.InterruptedError
	if d <= 0 || srv.Addr() == "" || errors.As(runErr, &interrupted) {
		return
	}
	fmt.Fprintf(a.stderr, "runall: the run has ended; its report stays served on http://%s/ for %v, or until SIGTERM\n", srv.Addr(), d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-sigs:
	case <-t.C:
	}
}
