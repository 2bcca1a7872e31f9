package proc

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// lines collects what an attempt prints, by stream.
type lines struct {
	mu  sync.Mutex
	got map[string][]string
}

func (l *lines) add(stream, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string][]string{}
	}
	l.got[stream] = append(l.got[stream], line)
}

func (l *lines) of(stream string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got[stream])
}

func run(t *testing.T, a *Attempt) (Outcome, *lines) {
	t.Helper()
	l := &lines{}
	if a.Procs == nil {
		a.Procs = NewTable()
	}
	a.OnLine = l.add
	if a.KillWait == 0 {
		a.KillWait = time.Second
	}
	return a.Run(context.Background()), l
}

func TestAttemptOutcome(t *testing.T) {
	for _, tc := range []struct {
		cmd    string
		code   int
		signal syscall.Signal
	}{
		{"true", 0, 0},
		{"exit 3", 3, 0},
		{"kill -KILL $$", -1, syscall.SIGKILL},
		{"kill -TERM $$", -1, syscall.SIGTERM},
	} {
		out, _ := run(t, &Attempt{Cmd: tc.cmd})
		if out.ExitCode != tc.code || out.Signal != tc.signal || out.OK() != (tc.code == 0) {
			t.Errorf("%q: exit %d signal %v ok %v; want %d %v", tc.cmd, out.ExitCode, out.Signal, out.OK(), tc.code, tc.signal)
		}
		if out.Started.IsZero() || out.Finished.Before(out.Started) {
			t.Errorf("%q: started %v finished %v", tc.cmd, out.Started, out.Finished)
		}
	}
}

func TestAttemptStartFails(t *testing.T) {
	out, _ := run(t, &Attempt{Cmd: "true", Dir: "/nonexistent/dir"})
	if out.Err == nil || out.ExitCode != -1 || out.OK() {
		t.Errorf("outcome %+v, want a start error", out)
	}
}

// Output comes line by line, in order per stream; a carriage return ends a piece too, handed
// on with its \r, so that a progress bar's updates are read as they come.
func TestAttemptLines(t *testing.T) {
	out, l := run(t, &Attempt{Cmd: `echo one; echo two >&2; printf 'a\rb\rc\n'; printf 'no newline'`})
	if !out.OK() {
		t.Fatalf("outcome %+v", out)
	}
	if got, want := l.of("stdout"), []string{"one", "a\r", "b\r", "c", "no newline"}; !slices.Equal(got, want) {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := l.of("stderr"), []string{"two"}; !slices.Equal(got, want) {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

func TestAttemptLongLineIsSplit(t *testing.T) {
	_, l := run(t, &Attempt{Cmd: `head -c 200000 /dev/zero | tr '\0' x; echo`})
	got := l.of("stdout")
	if len(got) < 3 || len(strings.Join(got, "")) != 200000 {
		t.Fatalf("%d lines of %d bytes in all; want the 200000 bytes in lines of at most %d", len(got), len(strings.Join(got, "")), maxLine)
	}
	for _, s := range got {
		if len(s) > maxLine {
			t.Errorf("a line of %d bytes", len(s))
		}
	}
}

func TestAttemptTimeout(t *testing.T) {
	out, _ := run(t, &Attempt{Cmd: "sleep 30", Timeout: 100 * time.Millisecond, KillWait: 100 * time.Millisecond})
	if !out.TimedOut || out.OK() || out.Signal != syscall.SIGTERM {
		t.Errorf("outcome %+v, want timed out by SIGTERM", out)
	}
}

// A command that ignores SIGTERM is killed once KillWait has passed.
func TestAttemptTimeoutKills(t *testing.T) {
	out, _ := run(t, &Attempt{Cmd: "trap '' TERM; sleep 30", Timeout: 100 * time.Millisecond, KillWait: 200 * time.Millisecond})
	if !out.TimedOut || out.Signal != syscall.SIGKILL {
		t.Errorf("outcome %+v, want timed out, then SIGKILL", out)
	}
}

// Capture brings back what the command exported, for the tasks after it.
func TestAttemptCapture(t *testing.T) {
	before := []string{"PATH=/usr/bin:/bin", "KEEP=1", "CHANGE=old"}
	out, _ := run(t, &Attempt{Cmd: "export NEW=x CHANGE=new # a trailing comment", Env: before, Capture: true})
	got := ExportedChanges(before, out.Exported)
	slices.Sort(got)
	if want := []string{"CHANGE=new", "NEW=x"}; !slices.Equal(got, want) {
		t.Errorf("exported %q, want %q", got, want)
	}
}

// A background process that keeps the output pipe open does not hold the attempt: it ends
// a short while after the shell.
func TestAttemptBackgroundHoldsPipe(t *testing.T) {
	done := make(chan Outcome, 1)
	go func() {
		out, _ := run(t, &Attempt{Cmd: "sleep 30 & echo started"})
		done <- out
	}()
	select {
	case out := <-done:
		if !out.OK() {
			t.Errorf("outcome %+v", out)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the attempt waited for its background process")
	}
}

// Signal reaches every running group; once the table is closed, a group that starts later
// is stopped on arrival.
func TestTableSignal(t *testing.T) {
	procs := NewTable()
	started := make(chan int, 1)
	done := make(chan Outcome, 1)
	go func() {
		out, _ := run(t, &Attempt{Cmd: "sleep 30", Procs: procs, OnStart: func(pgid int) { started <- pgid }})
		done <- out
	}()
	if pgid := <-started; pgid <= 0 {
		t.Fatalf("OnStart got %d", pgid)
	}
	procs.Signal(syscall.SIGTERM, true)
	if out := <-done; out.Signal != syscall.SIGTERM {
		t.Errorf("outcome %+v, want stopped by SIGTERM", out)
	}
	out, _ := run(t, &Attempt{Cmd: "sleep 30", Procs: procs})
	if out.Signal != syscall.SIGTERM {
		t.Errorf("a command started after the table closed: %+v, want stopped by SIGTERM", out)
	}
}

// A process started by a task is found by its group, and by its ancestry once it left the
// group; a process of another tree is not.
func TestLineage(t *testing.T) {
	done := make(chan Outcome, 1)
	started := make(chan int, 1)
	go func() {
		out, _ := run(t, &Attempt{
			Cmd:     `sleep 30 & echo $!; setsid sleep 30 & echo $!; wait`,
			OnStart: func(pgid int) { started <- pgid },
		})
		done <- out
	}()
	shell := <-started
	var kids []int
	deadline := time.Now().Add(10 * time.Second)
	for len(kids) < 2 && time.Now().Before(deadline) {
		kids = childrenOf(shell)
		time.Sleep(20 * time.Millisecond)
	}
	if len(kids) < 2 {
		t.Fatalf("the shell's children: %v", kids)
	}
	for _, k := range kids {
		l, ok := LineageOf(k)
		if !ok || !l.Has(shell) {
			t.Errorf("child %d: lineage %+v, want it under the shell %d", k, l, shell)
		}
	}
	if l, ok := LineageOf(1); !ok || l.Has(shell) {
		t.Errorf("process 1: %+v %v", l, ok)
	}
	if _, ok := LineageOf(1 << 22); ok {
		t.Error("a PID beyond PID_MAX_LIMIT has a lineage")
	}
	_ = syscall.Kill(-shell, syscall.SIGKILL)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	<-done
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := readStat("/proc", n); ok && ppid == pid {
			out = append(out, n)
		}
	}
	return out
}

// A consumer slower than the command loses none of its lines: the pipes are read for as
// long as lines keep coming, not for a fixed time after the shell ends.
func TestAttemptSlowConsumerGetsEveryLine(t *testing.T) {
	// 200 KB, more than the pipe and the reader's buffer hold: when the shell ends, some
	// of it still waits in the pipe, and the consumer needs about 5 s for all of it.
	const n = 2000
	var got atomic.Int64
	a := &Attempt{Cmd: fmt.Sprintf("seq %d | sed 's/$/ %s/'", n, strings.Repeat("x", 95)),
		Procs: NewTable(), KillWait: time.Second,
		OnLine: func(string, string) { time.Sleep(2500 * time.Microsecond); got.Add(1) }}
	if out := a.Run(context.Background()); !out.OK() {
		t.Fatalf("outcome %+v", out)
	}
	if got.Load() != n {
		t.Errorf("%d lines reached the consumer, want %d", got.Load(), n)
	}
}

// A consumer that stalls on one line for longer than drainQuiet, while the rest of the
// output waits in the pipe and the shell has ended, still gets every line: the quiet is
// counted from when it took the last line, not from when it was handed it.
func TestAttemptStalledConsumerGetsEveryLine(t *testing.T) {
	const n = 500 // 50 KB: the pipe holds it all, and the shell ends during the stall
	var got atomic.Int64
	a := &Attempt{Cmd: fmt.Sprintf("seq %d | sed 's/$/ %s/'", n, strings.Repeat("x", 95)),
		Procs: NewTable(), KillWait: time.Second,
		OnLine: func(string, string) {
			if got.Add(1) == 1 {
				time.Sleep(drainQuiet + time.Second)
			}
		}}
	if out := a.Run(context.Background()); !out.OK() {
		t.Fatalf("outcome %+v", out)
	}
	if got.Load() != n {
		t.Errorf("%d lines reached the consumer, want %d", got.Load(), n)
	}
}

// TestAttemptOOMScore: a task's shell, and what it starts, score above runall for the
// kernel's OOM killer.
func TestAttemptOOMScore(t *testing.T) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skip("no oom_score_adj here:", err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(own)))
	want := strconv.Itoa(min(n+oomScoreRaise, oomScoreMax))
	// The sleep makes the shell fork cat rather than exec it: a child started later.
	out, l := run(t, &Attempt{Cmd: "cat /proc/$$/oom_score_adj; sleep 0.1; cat /proc/self/oom_score_adj"})
	if got := l.of("stdout"); !out.OK() || !slices.Equal(got, []string{want, want}) {
		t.Errorf("shell and child score %q (%+v), want %s for both (runall's is %s)", got, out, want, strings.TrimSpace(string(own)))
	}
}

func TestTaskOOMScoreAdj(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		own  string
		want int
	}{{"0\n", 500}, {"-998\n", -498}, {"800", 1000}, {"garbage", 500}} {
		p := dir + "/adj"
		if err := os.WriteFile(p, []byte(c.own), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := taskOOMScoreAdj(p); got != c.want {
			t.Errorf("own %q: %d, want %d", c.own, got, c.want)
		}
	}
	if got := taskOOMScoreAdj(dir + "/missing"); got != 500 {
		t.Errorf("unreadable own score: %d, want 500", got)
	}
}
