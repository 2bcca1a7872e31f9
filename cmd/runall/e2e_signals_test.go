package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/runall/runall/internal/citest"
	"github.com/runall/runall/internal/eventually"
	rproc "github.com/runall/runall/runner/proc"
)

// TestSignalStopsEveryTask stops a run whose tasks make it hard: one ignores SIGTERM, one
// has a background child, one has a child in a session of its own, one is a plain sleep.
// After runall exits, none of their processes may be left.
func TestSignalStopsEveryTask(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{
		{syscall.SIGTERM, 143},
		{syscall.SIGINT, 130},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			p := e.start("--log-dir", "logs", "--results", "results.json", "--grace", "2s", testdata("signals.yml"))
			names := []string{"stubborn", "background", "escaped", "plain"}
			var pids []int
			for _, name := range names {
				file := e.path("pids", name)
				eventually.True(t, "task "+name+" to start", func() bool {
					_, err := os.Stat(file)
					return err == nil
				})
				pids = append(pids, pidsIn(t, file)...)
			}
			killOnCleanup(t, pids)

			p.signal(tc.sig)
			r := p.wait()
			r.wantCode(t, tc.code)
			wantGone(t, "a task's process", pids)

			res := e.results()
			res.task(t, "never").want(t, "skipped", noExitCode, 0)
			if e.exists("never.done") {
				t.Error("a task started after the signal")
			}
			if res.Status != "stopped" {
				t.Errorf("run status %q, want stopped", res.Status)
			}
			// stubborn ignores SIGTERM: the grace period ends with SIGKILL, which runall sent.
			wantSignal := map[string]string{"stubborn": "SIGKILL", "background": "SIGTERM", "escaped": "SIGTERM", "plain": "SIGTERM"}
			for _, name := range names {
				tr := res.task(t, name)
				want := "killed by " + wantSignal[name] + ": runall was stopped by " + rproc.SignalName(tc.sig)
				if tr.Status != "stopped" || tr.Signal != wantSignal[name] || tr.Reason != want {
					t.Errorf("task %s: status %q, signal %q, reason %q; want stopped, %s, %q",
						name, tr.Status, tr.Signal, tr.Reason, wantSignal[name], want)
				}
			}
			if !strings.Contains(r.stdout, "4 stopped") {
				t.Errorf("the summary does not count 4 stopped trials\n%v", r)
			}
			for _, tr := range e.faultResults().Tasks { // runall was stopped: preempted, never the trial's failure
				if n := len(tr.AttemptList); tr.Status == "stopped" && (n == 0 || tr.AttemptList[n-1].Class != "preempted") {
					t.Errorf("task %s: attempts %+v, want its last preempted", tr.Name, tr.AttemptList)
				}
			}
		})
	}
}

// TestOutsideSIGKILLIsNamed: a trial killed by a SIGKILL that runall did not send (the
// kernel's OOM killer sends those) fails, and its reason names the signal and the suspect.
func TestOutsideSIGKILLIsNamed(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	p := e.start("--log-dir", "logs", "--results", "results.json", testdata("outside-kill.yml"))
	eventually.True(t, "the task to start", func() bool { return e.exists("pid") })
	pids := pidsIn(t, e.path("pid"))
	killOnCleanup(t, pids)
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	r.wantCode(t, 1)
	res := e.results()
	tr := res.task(t, "victim")
	if tr.Status != "failed" || tr.Signal != "SIGKILL" || !strings.Contains(tr.Reason, "killed by SIGKILL") ||
		!strings.Contains(tr.Reason, "OOM killer") {
		t.Errorf("victim: status %q, signal %q, reason %q; want failed, SIGKILL, a reason naming SIGKILL and the OOM killer",
			tr.Status, tr.Signal, tr.Reason)
	}
	if res.Status != "failed" {
		t.Errorf("run status %q, want failed", res.Status)
	}
}

// TestSecondSIGINTKillsAtOnce: the first SIGINT sends SIGTERM, which the task ignores, and
// the grace period before SIGKILL is far longer than the test may wait; the second SIGINT
// kills it.
func TestSecondSIGINTKillsAtOnce(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	p := e.start("--log-dir", "logs", "--grace", "1h", testdata("second-sigint.yml"))
	eventually.True(t, "the task to start", func() bool { return e.exists("pids") })
	pids := pidsIn(t, e.path("pids"))
	killOnCleanup(t, pids)

	p.signal(syscall.SIGINT)
	p.waitOutput("received SIGINT") // the first one has been handled
	p.signal(syscall.SIGINT)
	r := p.wait()
	r.wantCode(t, 130)
	wantGone(t, "the stubborn task", pids)
}

// TestPlainOutput: stdout is a pipe, so the output is plain: not one escape byte, even when a
// task prints colours, and every line about a task starts with its name in brackets.
func TestPlainOutput(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("plain.yml")
	r.wantCode(t, 1)
	if i := strings.IndexByte(r.stdout+r.stderr, 0x1b); i >= 0 {
		t.Errorf("escape byte at offset %d of the output\n%v", i, r)
	}
	wantLines(t, r,
		"[colored] started",
		"[colored] red plain",
		"[colored] progress 1",
		"[colored] progress 2",
		"[broken] started",
		"[broken] to stderr",
		"[p1] started",
		"[p1] from p1",
		"[p2] from p2",
	)
	for _, re := range []string{
		`(?m)^\[colored\] ok \(exit code 0\) in \d+\.\ds$`,
		`(?m)^\[broken\] failed with exit code 3 in \d+\.\ds \(crashed\)$`, // its class: docs/taskfile.md#when-trials-go-wrong
		`(?m)^\[p1\] ok \(exit code 0\) in \d+\.\ds$`,
		`(?m)^\[p2\] ok \(exit code 0\) in \d+\.\ds$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("no line matches %s\n%v", re, r)
		}
	}
}

// startInPTY runs runall under a pseudo-terminal made by util-linux script(1), with
// TERM=xterm, so that it draws its live view. What script copies from the terminal is the
// proc's stdout; script -e exits with runall's exit code.
func (e *e2e) startInPTY(args ...string) *proc {
	e.t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		citest.Unavailable(e.t, "needs script(1) from util-linux (apt-get install bsdutils) to run runall under a pseudo-terminal")
	}
	quoted := []string{shellQuote(runallBin)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	e.env = append(e.env, "TERM=xterm", "SHELL=/bin/sh") // the last TERM wins
	return e.startCmd(script, args, "-qfec", strings.Join(quoted, " "), "/dev/null")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

var cursorUp = regexp.MustCompile(`\x1b\[\d+A`)

// wantCursorRestored fails unless the output hid the cursor and showed it again after the
// last time it hid it.
func wantCursorRestored(t *testing.T, r result) {
	t.Helper()
	hide, show := strings.LastIndex(r.stdout, "\x1b[?25l"), strings.LastIndex(r.stdout, "\x1b[?25h")
	if hide < 0 {
		t.Errorf("the live view never hid the cursor: was it drawn?\n%q", r.stdout)
	}
	if show < hide {
		t.Errorf("the cursor is not shown again (\\x1b[?25h) after it was last hidden\n%q", r.stdout)
	}
}

func TestLiveViewUnderTerminal(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.startInPTY("--log-dir", "logs", testdata("live.yml")).wait()
	r.wantCode(t, 0)
	if !cursorUp.MatchString(r.stdout) {
		t.Errorf("no cursor movement in the live view\n%q", r.stdout)
	}
	wantCursorRestored(t, r)
	for _, name := range []string{"first", "p1", "p2"} {
		if !strings.Contains(r.stdout, name) {
			t.Errorf("the live view does not show %q", name)
		}
	}
}

func TestLiveViewRestoresCursorOnSIGINT(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	p := e.startInPTY("--log-dir", "logs", "--grace", "2s", testdata("live-interrupt.yml"))
	eventually.True(t, "the task to start", func() bool { return e.exists("runall.pid") })
	p.waitOutput("\x1b[?25l") // a frame has been drawn
	b, err := os.ReadFile(filepath.Join(e.dir, "runall.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	r.wantCode(t, 130)
	wantCursorRestored(t, r)
}

// TestLoadStopsOnSignal: check and run, whatever they are doing while they load the file
// (here: waiting to read it from a FIFO that nobody writes, as they would wait on a slow
// disk or a long expansion), end on SIGTERM with 143 and on SIGINT with 130.
func TestLoadStopsOnSignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd  string
		sig  syscall.Signal
		code int
	}{
		{"check", syscall.SIGTERM, 143},
		{"check", syscall.SIGINT, 130},
		{"run", syscall.SIGTERM, 143},
		{"run", syscall.SIGINT, 130},
	} {
		t.Run(tc.cmd+"/"+rproc.SignalName(tc.sig), func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			fifo := e.path("tasks.yml")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			p := e.start(tc.cmd, fifo)
			eventually.True(t, "check to open its file", func() bool { return blockedOnFIFO(p.cmd.Process.Pid) })
			p.signal(tc.sig)
			r := p.wait()
			r.wantCode(t, tc.code)
			if !strings.Contains(r.stderr, "interrupted by "+rproc.SignalName(tc.sig)) {
				t.Errorf("stderr does not say what stopped it\n%v", r)
			}
		})
	}
}

// blockedOnFIFO reports whether a thread of process pid waits in open(2) for a FIFO's writer
// (the kernel's wait_for_partner), which runall reaches only after its signal handling is set.
func blockedOnFIFO(pid int) bool {
	files, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "partner") {
			return true
		}
	}
	return false
}
