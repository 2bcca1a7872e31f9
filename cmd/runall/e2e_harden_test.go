package main_test

// End-to-end tests of the defects found by trying runall as an attacker and a careless
// user would: each is named after what went wrong.

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// writeFile writes a file in the working directory.
func (e *e2e) writeFile(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(e.path(name), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// TestUnsetVariableDeletesBucket: an upload with delete: true to s3://bucket/${RUN_PREFIX}
// with RUN_PREFIX unset would sync to the bucket's root and delete everything else. check
// exits 2 naming the file, line, column and variable; run refuses the same way before any
// task or transfer; with the variable set, only its prefix changes.
func TestUnsetVariableDeletesBucket(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	s.srv.Put(t, s.bucket, "other-team/model.bin", []byte("keep me"))
	s.writeFile("tasks.yml", `s3:
  upload:
    - {from: out/, to: "s3://${BUCKET}/${RUN_PREFIX}", delete: true}
tasks:
  - cmd: mkdir -p out && echo hi > out/a.txt && touch ran
`)
	r := s.run("check", "tasks.yml")
	r.wantCode(t, 2)
	if !strings.Contains(r.stderr, "tasks.yml:3:24: s3: upload: to: ${RUN_PREFIX} is unset or empty") {
		t.Errorf("check does not name the place and the variable\n%v", r)
	}
	r = s.run("--log-dir", "logs", "tasks.yml")
	r.wantCode(t, 2)
	if s.exists("ran") || !strings.Contains(r.stderr, "${RUN_PREFIX}") {
		t.Errorf("the run did not refuse before its task\n%v", r)
	}
	if keys := s.keys(""); !slices.Equal(keys, []string{"other-team/model.bin"}) {
		t.Errorf("the bucket holds %q", keys)
	}

	r = s.withEnv("RUN_PREFIX=runs/1").run("--log-dir", "logs", "tasks.yml")
	r.wantCode(t, 0)
	s.wantObject("other-team/model.bin", "keep me")
	s.wantObject("runs/1/a.txt", "hi\n")
}

// slowProxy forwards TCP connections on 127.0.0.1 to target, passing what the server sends
// at rate bytes a second: an S3 download through it takes as long as a test needs.
type slowProxy struct {
	ln   net.Listener
	sent atomic.Int64 // bytes passed from the server to clients
}

func startSlowProxy(t *testing.T, target string, rate int) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowProxy{ln: ln}
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				p.serve(client, target, rate)
			}()
		}
	}()
	return p
}

func (p *slowProxy) serve(client net.Conn, target string, rate int) {
	defer client.Close()
	server, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer server.Close()
	go func() { _, _ = io.Copy(server, client); server.Close() }()
	const chunk = 8 << 10
	buf := make([]byte, chunk)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
			p.sent.Add(int64(n))
			time.Sleep(time.Duration(n) * time.Second / time.Duration(rate))
		}
		if err != nil {
			return
		}
	}
}

func (p *slowProxy) url() string { return "http://" + p.ln.Addr().String() }

// wantRecord fails unless the run left its results and its report.
func (e *e2e) wantRecord(r result) resultsFile {
	e.t.Helper()
	if !e.exists("results.json") {
		e.t.Fatalf("no results.json\n%v", r)
	}
	reports, _ := filepath.Glob(e.path("logs", "2*", "report.html")) // not logs/latest/
	if len(reports) != 1 {
		e.t.Errorf("%d report.html files in the log directory, want 1\n%v", len(reports), r)
	}
	return e.results()
}

// TestSIGTERMStopsTransfers: SIGTERM in the middle of a slow initial download stops it at
// once (the proxy has not sent the whole object when runall has exited), and the run
// still ends with 143, its results and its report, no task started.
func TestSIGTERMStopsTransfers(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	const size = 4 << 20
	s.srv.Put(t, s.bucket, "big.bin", bytes.Repeat([]byte("0123456789abcdef"), size/16))
	u, err := url.Parse(s.srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startSlowProxy(t, u.Host, 256<<10) // 16 s for the object
	s.writeFile("tasks.yml", `s3:
  download: [{from: "s3://${BUCKET}/big.bin", to: data/big.bin}]
  upload: [{from: out/, to: "s3://${BUCKET}/out/"}]
tasks:
  - cmd: touch ran
`)
	e := s.withEnv("AWS_ENDPOINT_URL="+proxy.url(), "AWS_ENDPOINT_URL_S3="+proxy.url())
	p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "2s", "tasks.yml")
	eventually(t, "the download to start", func() bool { return proxy.sent.Load() > 256<<10 })
	p.signal(syscall.SIGTERM)
	r := p.wait()
	r.wantCode(t, 143)
	if sent := proxy.sent.Load(); sent >= size {
		t.Errorf("the download ran to its end (%d bytes) after SIGTERM\n%v", sent, r)
	}
	res := s.wantRecord(r)
	if s.exists("ran") || res.Status != "stopped" {
		t.Errorf("run status %q, the task ran: %v\n%v", res.Status, s.exists("ran"), r)
	}
}

// TestOtherSignalsLoseTheRecord: SIGHUP stops a run as SIGTERM does (exit 129), and a
// closed stdout (runall ... | head -1) does not stop it at all: either way the run's
// results and report are written and no task process is left.
func TestOtherSignalsLoseTheRecord(t *testing.T) {
	t.Parallel()
	t.Run("SIGHUP", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "2s", testdata("signals.yml"))
		var pids []int
		for _, name := range []string{"stubborn", "background", "escaped", "plain"} {
			file := e.path("pids", name)
			eventually(t, "task "+name+" to start", func() bool { _, err := os.Stat(file); return err == nil })
			pids = append(pids, pidsIn(t, file)...)
		}
		killOnCleanup(t, pids)
		p.signal(syscall.SIGHUP)
		r := p.wait()
		r.wantCode(t, 129)
		wantGone(t, "a task's process", pids)
		res := e.wantRecord(r)
		if res.Status != "stopped" || res.task(t, "plain").Reason != "killed by SIGTERM: runall was stopped by SIGHUP" {
			t.Errorf("run status %q, plain: %q\n%v", res.Status, res.task(t, "plain").Reason, r)
		}
	})
	t.Run("head -1", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		e.writeFile("tasks.yml", `tasks:
  - name: first
    cmd: echo one; echo two
  - name: later
    cmd: echo $$ > later.pid; sleep 1; for i in 1 2 3 4 5; do echo line $i; done; touch later.done
`)
		cmd := exec.Command(runallBin, "--log-dir", "logs", "--results", "results.json", "tasks.yml")
		cmd.Dir, cmd.Env = e.dir, e.env
		var stderr syncBuffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		first, err := bufio.NewReader(out).ReadString('\n')
		out.Close() // head -1 exits
		if err != nil {
			t.Fatalf("no first line: %v", err)
		}
		werr := cmd.Wait()
		r := result{args: []string{"tasks.yml | head -1"}, stdout: first, stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
		if werr != nil && cmd.ProcessState.ExitCode() < 0 {
			t.Fatalf("runall was killed: %v\n%v", cmd.ProcessState, r)
		}
		r.wantCode(t, 0)
		if !e.exists("later.done") {
			t.Errorf("the task after the closed stdout did not finish\n%v", r)
		}
		wantGone(t, "a task's process", pidsIn(t, e.path("later.pid")))
		res := e.wantRecord(r)
		if res.Status != "ok" || res.task(t, "later").Status != "ok" {
			t.Errorf("run status %q\n%v", res.Status, r)
		}
	})
}
