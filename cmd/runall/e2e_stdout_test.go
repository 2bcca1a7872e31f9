package main_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// floodLines is how many lines each of flood.yml's four trials prints.
const floodLines = 40000

// stdoutHow is what the test does with runall's stdout.
type stdoutHow int

const (
	stdoutRead   stdoutHow = iota // read as it comes
	stdoutUnread                  // not read until the trials have ended
	stdoutClosed                  // closed before runall starts
)

func (h stdoutHow) String() string {
	return [...]string{"read", "not read until the trials end", "closed"}[h]
}

// stdoutRun is how runall ran on flood.yml.
type stdoutRun struct {
	stdout, stderr string // what runall printed, once read
	code           int
	maxRSS         int64         // runall's peak resident memory, bytes
	ended          time.Duration // from its start until its trials had ended and the results were written
}

// watchRSS reads the most resident memory process pid has held (its VmHWM) until it
// exits; the returned func stops and tells the last value read, in bytes. It is read from
// /proc rather than from wait4's rusage, which counts the test's own memory too: the
// child shares it until it execs.
func watchRSS(pid int) (peak func() int64) {
	var last atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if kb, ok := vmHWM(pid); ok {
				last.Store(kb << 10)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return last.Load()
	}
}

// vmHWM is VmHWM from /proc/pid/status, in kB; false once the process is gone.
func vmHWM(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// runFlood runs flood.yml with --output mode and its stdout read, unread or closed. Unread,
// nobody reads it until the trials have all ended and the results are written; the test
// fails when they have not within limit.
func runFlood(t *testing.T, e *e2e, mode string, how stdoutHow, limit time.Duration) stdoutRun {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, runallBin, "--log-dir", "logs", "--results", "results.json", "--output", mode, testdata("flood.yml"))
	cmd.Dir, cmd.Env, cmd.Stdout = e.dir, e.env, w
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if how == stdoutClosed {
		r.Close()
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	rss := watchRSS(cmd.Process.Pid)
	read := make(chan string, 1)
	readAll := func() { b, _ := io.ReadAll(r); read <- string(b) }
	if how == stdoutRead {
		go readAll()
	}
	for !e.exists("results.json") {
		if time.Since(start) > limit {
			t.Fatalf("--output %s, stdout %s: the trials did not end within %v", mode, how, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ended := time.Since(start)
	if how == stdoutUnread {
		go readAll()
	}
	err = cmd.Wait()
	out := stdoutRun{maxRSS: rss(), ended: ended}
	if how != stdoutClosed {
		out.stdout = <-read
	}
	if strings.Contains(stderr.String(), "WARNING: DATA RACE") {
		t.Errorf("the race detector found a data race in runall\n%s", stderr.String())
	}
	if cmd.ProcessState == nil {
		t.Fatalf("runall did not run: %v", err)
	}
	out.code, out.stderr = cmd.ProcessState.ExitCode(), stderr.String()
	return out
}

// Point 1 of issue 29: a stdout nobody reads, or one that is closed, holds no trial back.
// The trials end while nobody reads (they would stand still, blocked on their own output,
// had the output held them), every line reaches its log, what stdout could not take is
// said once it can write again, and runall's memory stays within a few MB of a run whose
// stdout is read, though the trials print 16 MB. Nobody reads for 30 s, or for four times
// as long as the run with stdout read took where that is longer (the -race binary on a
// loaded machine): a run whose output held its trials never ends unread.
func TestStalledStdoutHoldsNoTrial(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"plain", "json"} {
		e := newE2E(t)
		read := runFlood(t, e, mode, stdoutRead, cmdTimeout)
		checkFlood(t, e, mode, "read", read, read)
		limit := max(30*time.Second, 4*read.ended)
		for _, how := range []stdoutHow{stdoutUnread, stdoutClosed} {
			e := newE2E(t)
			got := runFlood(t, e, mode, how, limit)
			checkFlood(t, e, mode, how.String(), got, read)
			if how == stdoutClosed && (!strings.Contains(got.stderr, "runall: stdout: write ") || !strings.Contains(got.stderr, ": broken pipe: ") || !strings.Contains(got.stderr, " lines of output lost; every line is in the tasks' logs in logs/")) {
				t.Errorf("--output %s, stdout %s: no word on stderr of what stdout lost\n%s", mode, how, got.stderr)
			}
			if how == stdoutUnread && !strings.Contains(got.stdout, "lines of output not shown: stdout did not take them in time; every line is in the tasks' logs in ") {
				t.Errorf("--output %s, stdout %s: no word of the lines it could not show\n%.2000s", mode, how, got.stdout)
			}
		}
	}
}

// checkFlood checks that runall exited 0, that each trial of flood.yml ended ok with every
// line in its log, and that runall's memory stayed within a few MB of the run with its
// stdout read.
func checkFlood(t *testing.T, e *e2e, mode, how string, got, read stdoutRun) {
	t.Helper()
	what := "--output " + mode + ", stdout " + how
	t.Logf("%s: peak RSS %d MB", what, got.maxRSS>>20)
	if got.code != 0 {
		t.Errorf("%s: exit code %d, want 0", what, got.code)
	}
	const slack = 24 << 20 // the queue's 5 MB, and what the GC leaves about
	if got.maxRSS > read.maxRSS+slack {
		t.Errorf("%s: runall's peak RSS %d MB, against %d MB with stdout read: its memory grew with the output it could not write",
			what, got.maxRSS>>20, read.maxRSS>>20)
	}
	res := e.results()
	if len(res.Tasks) != 4 {
		t.Fatalf("%s: %d tasks in the results, want 4", what, len(res.Tasks))
	}
	for _, tr := range res.Tasks {
		b, err := os.ReadFile(filepath.Join(e.dir, tr.LogFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for l := range strings.Lines(string(b)) {
			if !strings.HasPrefix(l, "== ") { // runall's own notes: an attempt's start and end
				lines++
			}
		}
		if tr.Status != "ok" || lines != floodLines {
			t.Errorf("%s: %s ended %s with %d lines in its log, want ok with %d", what, tr.Name, tr.Status, lines, floodLines)
		}
	}
}
