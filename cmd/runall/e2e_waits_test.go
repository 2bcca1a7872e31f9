package main_test

// End-to-end tests of the rule "every wait obeys a stop and a deadline": whatever runall
// waits on (a sampler's ask or tell, the claims store, a file it opens, a task), SIGTERM ends
// the run with 143, its results and report written and nothing it started left behind; a
// wait that nobody stops ends by its own bound.

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/runall/runall/internal/eventually"
)

// TestEveryWaitObeysStop walks the waits: each was a run deaf to SIGTERM (only SIGKILL
// ended it, with no record) or a run that never ended.
func TestEveryWaitObeysStop(t *testing.T) {
	t.Parallel()
	t.Run("commands", waitsOnCommands)
	t.Run("claims store that never answers", waitsOnClaims)
	t.Run("FIFO", waitsOnFIFOs)
}

// waitsOnCommands: a sampler's ask and tell that hang, past their timeout or stopped, and a
// task stopped by SIGQUIT.
func waitsOnCommands(t *testing.T) {
	t.Parallel()
	// hang is a command that never returns, with a child that holds its pipes: it writes
	// "its pid, its child's pid" to FILE.
	hang := func(file string) string {
		return `echo $$ > ` + file + `.tmp; sleep 600 & echo $! >> ` + file + `.tmp; mv ` + file + `.tmp ` + file + `; wait`
	}
	const ask1 = `echo "{\"number\": 0, \"params\": {\"x\": \"1\"}}"`
	search := func(ask, tell, more string) string {
		return `config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: x=<x>
        cmd: echo "runall-metric acc=<x>"
        trials: 1
        search: {ask: '` + ask + `', tell: '` + tell + `'` + more + `}
`
	}
	for _, tc := range []struct {
		name, file string
		pids       string // the file the hanging command writes its pids to
		signal     syscall.Signal
		code       int
		say        string // the output says it
	}{
		{name: "ask", file: search(hang("ask.pid"), "true", ""), pids: "ask.pid", signal: syscall.SIGTERM, code: 143},
		{name: "tell", file: search(ask1, hang("tell.pid"), ""), pids: "tell.pid", signal: syscall.SIGTERM, code: 143},
		{name: "ask past its timeout", file: search(hang("ask.pid"), "true", ", timeout: 2s"), pids: "ask.pid", code: 1,
			say: "no answer within 2s (search: timeout): killed"},
		{name: "tell past its timeout", file: search(ask1, hang("tell.pid"), ", timeout: 2s"), pids: "tell.pid", code: 0,
			say: "no answer within 2s (search: timeout): killed"},
		{name: "SIGQUIT", file: "tasks:\n  - cmd: '" + hang("task.pid") + "'\n", pids: "task.pid", signal: syscall.SIGQUIT, code: 131},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			e.writeFile("tasks.yml", tc.file)
			p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "2s", "tasks.yml")
			eventually.True(t, "the command to start", func() bool { return e.exists(tc.pids) })
			pids := pidsIn(t, e.path(tc.pids))
			killOnCleanup(t, pids)
			if tc.signal != 0 {
				p.signal(tc.signal)
			}
			r := p.wait()
			r.wantCode(t, tc.code)
			wantGone(t, tc.name, pids)
			res := e.wantRecord(r)
			if tc.signal != 0 && res.Status != "stopped" {
				t.Errorf("run status %q, want stopped\n%v", res.Status, r)
			}
			if !strings.Contains(r.stdout, tc.say) || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("the output does not say %q (or dumps goroutines)\n%v", tc.say, r)
			}
		})
	}
}

// waitsOnClaims: joining a sweep whose store accepts connections and never answers says it
// tries again, and SIGTERM ends it.
func waitsOnClaims(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // accept, and never answer
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	e := newE2E(t).withEnv("RUNALL_CLAIMS=s3://bucket/sweep/", "AWS_ENDPOINT_URL=http://"+ln.Addr().String(),
		"AWS_ACCESS_KEY_ID=runalltest", "AWS_SECRET_ACCESS_KEY=runalltestsecret", "AWS_REGION=us-east-1")
	e.writeFile("tasks.yml", "tasks:\n  - name: sweep\n    parallel-tasks:\n      - cmd: touch ran\n")
	p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "2s", "tasks.yml")
	p.waitOutput("(trying again)")
	p.signal(syscall.SIGTERM)
	r := p.wait()
	r.wantCode(t, 143)
	if res := e.wantRecord(r); res.Status != "stopped" || e.exists("ran") {
		t.Errorf("run status %q, ran: %v\n%v", res.Status, e.exists("ran"), r)
	}
}

// waitsOnFIFOs: a FIFO no process reads, named where runall writes or reads, is an error at
// once and stays a FIFO.
func waitsOnFIFOs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file, say string }{
		{"task log-path", "tasks:\n  - cmd: echo hi\n    log-path: fifo\n", "fifo is a FIFO that no process reads"},
		{"config log-path", "config: {log-path: fifo}\ntasks:\n  - cmd: echo hi\n", "fifo is a FIFO that no process reads"},
		{"metrics", "tasks:\n  - cmd: echo hi\n    metrics: fifo\n", "is not a regular file"},
	} {
		e := newE2E(t)
		if err := syscall.Mkfifo(e.path("fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.writeFile("tasks.yml", tc.file)
		r := e.run("--log-dir", "logs", "--results", "results.json", "tasks.yml")
		if !strings.Contains(r.stdout+r.stderr, tc.say) {
			t.Errorf("%s: the run does not say %q\n%v", tc.name, tc.say, r)
		}
		if fi, err := os.Lstat(e.path("fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s: the FIFO is gone or replaced", tc.name)
		}
	}
}
