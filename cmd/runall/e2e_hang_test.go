package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Hung trials caught and resumed, crash loops ended (issue 44, points 1 and 2).

// withPySpy puts a stand-in py-spy first on the test's PATH: it prints a dump that names
// the pid it was asked about.
func (e *e2e) withPySpy() {
	e.t.Helper()
	bin := e.t.TempDir()
	script := "#!/bin/sh\necho \"Thread 0x7f (idle): MainThread (stand-in of pid $3)\"\necho \"    wait (threading.py:320)\"\n"
	if err := os.WriteFile(filepath.Join(bin, "py-spy"), []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
}

// TestHangCaught: a trial that hangs silently and one that hangs printing are each found
// hung, their processes' dump kept in their log, and resumed from their checkpoint as a
// hung attempt that spends no retry (retries: 0), until hang-retries (1) is spent; the
// false alarms (a threefold slowdown, a silent evaluation below the learned rule, output
// with no progress, which auto does not judge) end ok.
func TestHangCaught(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.withPySpy()
	r := e.runFile("faults/hang.yml")
	r.wantCode(t, 1)
	res := e.faultResults()
	got := res.classes()
	for _, name := range []string{"silent", "printing"} {
		if strings.Join(got[name], ",") != "hung,hung" {
			t.Errorf("%s: attempts' classes %q, want hung twice\n%v", name, got[name], r)
		}
	}
	for _, tr := range res.Tasks {
		switch tr.Name {
		case "silent", "printing":
			if tr.Status != "failed" || !strings.Contains(tr.Reason, "hung 2 times (hang-retries: 1)") ||
				len(tr.AttemptList) < 1 || !strings.Contains(tr.AttemptList[0].Reason, "hung: no progress step for") ||
				!strings.Contains(tr.AttemptList[0].Reason, "hang-after auto: 5 × ") {
				t.Errorf("%s: status %s, reason %q, attempts %+v", tr.Name, tr.Status, tr.Reason, tr.AttemptList)
			}
		default:
			if tr.Status != "ok" || len(tr.AttemptList) != 1 {
				t.Errorf("%s (a false alarm): status %s, attempts %+v, want ok at once\n%v", tr.Name, tr.Status, tr.AttemptList, r)
			}
		}
	}
	if !strings.Contains(r.stdout, "silent: hung: no progress step for") || !strings.Contains(r.stdout, "requeued, to resume from its checkpoint (hang 1 of 1, no retry spent)") {
		t.Errorf("the hang is not said\n%v", r)
	}
	log := readLogOf(t, e, "silent")
	if !strings.Contains(log, "(stand-in of pid ") || !strings.Contains(log, "restored") {
		t.Errorf("silent's log holds no dump of its processes, or no restore:\n%s", log)
	}
}

// TestCrashLoopEnded: a trial that crashes at the same step on every attempt ends failed
// after 3 attempts in a row without a new checkpoint copy, though retries allow 10; one
// without checkpoint: after 3 that reached no step beyond the attempt before.
func TestCrashLoopEnded(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("faults/crashloop.yml")
	r.wantCode(t, 1)
	res := e.faultResults()
	if got := res.classes()["loops"]; strings.Join(got, ",") != "crashed,crashed,crashed,crashed" {
		t.Errorf("loops: attempts' classes %q, want 4 crashed (one that kept a copy, 3 that did not)\n%v", got, r)
	}
	if got := res.classes()["loops-fresh"]; len(got) != 4 {
		t.Errorf("loops-fresh: attempts' classes %q, want 4 (one that reached its step 5, 3 that got no further)\n%v", got, r)
	}
	for _, tr := range res.Tasks {
		want := "crash loop: failed 3 times in a row without a new checkpoint copy (no-progress-restarts: 3)"
		if tr.Name == "loops-fresh" {
			want = "crash loop: failed 3 times in a row without reaching a step beyond its previous attempt's (no-progress-restarts: 3)"
		}
		if tr.Status != "failed" || !strings.Contains(tr.Reason, want) {
			t.Errorf("%s: status %s, reason %q, want %q", tr.Name, tr.Status, tr.Reason, want)
		}
	}
}

// readLogOf is the log of the trial named name under logs/.
func readLogOf(t *testing.T, e *e2e, name string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(e.path("logs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.Base(p), name) && found == "" {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no log of %s under logs/", name)
	}
	b, err := os.ReadFile(found)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHangHoldsGPU: a hung trial's GPU is held out of admission until its killed
// process's memory comes back; one that does not within gpu-release-wait is said, and
// taken back once it does; the trial itself goes back to the line and waits there for it
// (its only GPU). Without py-spy, its log keeps each process's wait channel.
func TestHangHoldsGPU(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("--fake-gpus", "1x8GiB", "--log-dir", "logs", "--results", "results.json", testdata("faults/hang-gpu.yml"))
	r.wantCode(t, 1)
	for _, want := range []string{"stuck: hung: no sign of life for", "[next] waiting: ", "(held until the processes of hung stuck leave it (gpu-release-wait))",
		"has not come back after gpu-release-wait 1s: left out of admission until it does", "came back after", "[next] ok"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in the output\n%v", want, r)
		}
	}
	if !strings.Contains(r.stdout, "[stuck] waiting: ") {
		t.Errorf("stuck did not go back to the line to wait for its GPU\n%v", r)
	}
	log := readLogOf(t, e, "stuck")
	if starts := attemptStarts(t, log); len(starts) != 2 || starts[1].Sub(starts[0]) < 6*time.Second {
		t.Errorf("stuck's second attempt started %v, want at least 6s after its first (hung after 3s, memory back 4s later):\n%s", starts, log)
	}
	if _, err := exec.LookPath("py-spy"); err != nil && !strings.Contains(log, ") waits in ") { // the kernel's wait channels
		t.Errorf("stuck's log holds no wait channel of its processes:\n%s", log)
	}
}

// attemptStarts is when each attempt in a trial's log started, in order.
func attemptStarts(t *testing.T, log string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "==" && f[2] == "attempt" {
			at, err := time.Parse(time.RFC3339, f[1])
			if err != nil {
				t.Fatalf("attempt line %q: %v", line, err)
			}
			out = append(out, at)
		}
	}
	return out
}

// TestHangRequeuedToOtherGPU: a hung trial goes back to the line rather than waiting for
// its own GPU: with that GPU held for its killed process's memory (30s), it resumes at once
// on the other one and ends ok.
func TestHangRequeuedToOtherGPU(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.run("--fake-gpus", "2x2GiB", "--log-dir", "logs", "--results", "results.json", testdata("faults/hang-move.yml"))
	r.wantCode(t, 0)
	for _, want := range []string{"[moved] started on GPU-fake-0", "requeued, to resume from its start (hang 1 of 2, no retry spent)",
		"[moved] started (attempt 2) on GPU-fake-1", "[moved] resumed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in the output\n%v", want, r)
		}
	}
	if got := e.faultResults().classes()["moved"]; strings.Join(got, ",") != "hung,ok" {
		t.Errorf("moved: attempts' classes %q, want hung then ok\n%v", got, r)
	}
}
