package main_test

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/runall/runall/internal/eventually"
)

// slowProxy forwards TCP connections on 127.0.0.1 to target at rate bytes a second each
// way: an S3 transfer through it takes as long as a test needs.
type slowProxy struct {
	ln       net.Listener
	sent     atomic.Int64 // bytes passed from the server to clients
	received atomic.Int64 // bytes passed from clients to the server
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
	done := make(chan struct{})
	go func() {
		defer close(done)
		slowCopy(server, client, rate, &p.received)
		server.Close()
	}()
	slowCopy(client, server, rate, &p.sent)
	client.Close()
	<-done
}

// slowCopy copies from src to dst at rate bytes a second, counting what it passed.
func slowCopy(dst, src net.Conn, rate int, count *atomic.Int64) {
	buf := make([]byte, 8<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			count.Add(int64(n))
			time.Sleep(time.Duration(n) * time.Second / time.Duration(rate))
		}
		if err != nil {
			return
		}
	}
}

func (p *slowProxy) url() string { return "http://" + p.ln.Addr().String() }

// TestSIGTERMStopsTransfers: SIGTERM in the middle of a slow initial download stops it at
// once (the proxy has not passed the whole object when runall has exited), as it does a
// url: script download that hangs; a second signal ends the final upload, which otherwise
// has --grace. Each run ends with its exit code, its results and its report.
func TestSIGTERMStopsTransfers(t *testing.T) {
	t.Parallel()
	const size = 4 << 20 // 16 s through the proxy
	big := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	slowS3 := func(t *testing.T) (*s3E2E, *e2e, *slowProxy) {
		s := newS3E2E(t)
		u, err := url.Parse(s.srv.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		proxy := startSlowProxy(t, u.Host, 256<<10)
		return s, s.withEnv("AWS_ENDPOINT_URL="+proxy.url(), "AWS_ENDPOINT_URL_S3="+proxy.url()), proxy
	}
	t.Run("download", func(t *testing.T) {
		t.Parallel()
		s, e, proxy := slowS3(t)
		s.srv.Put(t, s.bucket, "big.bin", big)
		s.writeFile("tasks.yml", `s3:
  download: [{from: "s3://${BUCKET}/big.bin", to: data/big.bin}]
  upload: [{from: out/, to: "s3://${BUCKET}/out/"}]
tasks:
  - cmd: touch ran
`)
		p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "2s", "tasks.yml")
		eventually.True(t, "the download to start", func() bool { return proxy.sent.Load() > 256<<10 })
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
	})
	t.Run("url script", func(t *testing.T) {
		t.Parallel()
		e := newE2E(t)
		asked, gaveUp := make(chan struct{}), make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(asked)
			<-r.Context().Done() // hangs until the client goes
			close(gaveUp)
		}))
		t.Cleanup(srv.Close)
		e.writeFile("tasks.yml", "tasks:\n  - url: "+srv.URL+"/train.sh\n  - cmd: touch after\n")
		p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "2s", "tasks.yml")
		<-asked
		p.signal(syscall.SIGTERM)
		r := p.wait()
		r.wantCode(t, 143)
		select {
		case <-gaveUp:
		default:
			t.Errorf("runall exited with the script's download still open\n%v", r)
		}
		if res := e.wantRecord(r); res.Status != "stopped" || e.exists("after") {
			t.Errorf("run status %q\n%v", res.Status, r)
		}
	})
	t.Run("second signal ends the final upload", func(t *testing.T) {
		t.Parallel()
		s, e, proxy := slowS3(t)
		if err := os.MkdirAll(s.path("out"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.path("out", "big.bin"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		s.writeFile("tasks.yml", `s3:
  upload: [{from: out/, to: "s3://${BUCKET}/out/"}]
tasks:
  - cmd: echo $$ > task.pid; exec sleep 1000
`)
		p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "60s", "tasks.yml")
		eventually.True(t, "the task to start", func() bool { return s.exists("task.pid") })
		pids := pidsIn(t, s.path("task.pid"))
		killOnCleanup(t, pids)
		p.signal(syscall.SIGTERM)
		eventually.True(t, "the final upload to start", func() bool { return proxy.received.Load() > 256<<10 })
		p.signal(syscall.SIGINT)
		r := p.wait()
		r.wantCode(t, 143)
		if got := proxy.received.Load(); got >= size {
			t.Errorf("the final upload ran to its end (%d bytes) after a second signal\n%v", got, r)
		}
		wantGone(t, "the task", pids)
		s.wantRecord(r)
	})
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
			eventually.True(t, "task "+name+" to start", func() bool { _, err := os.Stat(file); return err == nil })
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
