package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// What runall does when trials go wrong (issue 44): the class of each failed attempt, a
// diverged trial ended at once, a broken sweep stopped early.

// faultResults is the part of results.json these tests read.
type faultResults struct {
	Status         string         `json:"status"`
	FailureClasses map[string]int `json:"failure_classes"`
	Tasks          []struct {
		Name        string `json:"name"`
		Status      string `json:"status"`
		Reason      string `json:"reason"`
		Attempts    int    `json:"attempts"`
		AttemptList []struct {
			N         int    `json:"attempt"`
			Class     string `json:"class"`
			ExitCode  int    `json:"exit_code"`
			Signal    string `json:"signal"`
			Start     string `json:"start"`
			End       string `json:"end"`
			Reason    string `json:"reason"`
			Signature string `json:"signature"`
		} `json:"attempt_list"`
	} `json:"tasks"`
}

func (e *e2e) faultResults() faultResults {
	e.t.Helper()
	var r faultResults
	if err := json.Unmarshal([]byte(e.read("results.json")), &r); err != nil {
		e.t.Fatalf("results: %v", err)
	}
	return r
}

// classes is each task's attempts' classes, in order ("ok" for one with none).
func (r faultResults) classes() map[string][]string {
	out := map[string][]string{}
	for _, t := range r.Tasks {
		for _, a := range t.AttemptList {
			c := a.Class
			if c == "" {
				c = "ok"
			}
			out[t.Name] = append(out[t.Name], c)
		}
	}
	return out
}

// TestFailureClasses: a command not found is not-runnable, a crash at the same step on both
// attempts is crashed twice with one signature, an out-of-memory message is oom, a timeout
// is timeout; each attempt is listed with its exit, times and reason, the counts per class
// are the run's, and the failure lines and the summary say the class.
func TestFailureClasses(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("faults/classes.yml")
	r.wantCode(t, 1)
	res := e.faultResults()
	got := res.classes()
	want := map[string][]string{"typo": {"not-runnable"}, "crash": {"crashed", "crashed"}, "oom": {"oom"}, "slow": {"timeout"}, "fine": {"ok"}}
	for name, w := range want {
		if strings.Join(got[name], ",") != strings.Join(w, ",") {
			t.Errorf("%s: attempts' classes %q, want %q", name, got[name], w)
		}
	}
	if c := res.FailureClasses; c["crashed"] != 2 || c["not-runnable"] != 1 || c["oom"] != 1 || c["timeout"] != 1 || len(c) != 4 {
		t.Errorf("failure_classes %v, want crashed 2, not-runnable 1, oom 1, timeout 1", c)
	}
	for _, tr := range res.Tasks {
		if tr.Name != "crash" {
			continue
		}
		a, b := tr.AttemptList[0], tr.AttemptList[1]
		if a.N != 1 || b.N != 2 || a.ExitCode != 1 || a.Start == "" || a.End == "" || a.Reason != "exit code 1" ||
			a.Signature != "crashed exit 1: RuntimeError: simulated crash at step <n>" || b.Signature != a.Signature {
			t.Errorf("crash's attempts: %+v", tr.AttemptList)
		}
	}
	if !strings.Contains(r.stdout, "[typo] failed with exit code 127 in") || !strings.Contains(r.stdout, "(not-runnable)") {
		t.Errorf("the failure line does not say the class\n%v", r)
	}
	if !strings.Contains(r.stdout, "Failures by class and signature:\n  1× ") {
		t.Errorf("the summary does not group the failures\n%v", r)
	}
}

// TestDiverged: a trial whose loss goes NaN ends at once as diverged (stopped at the step
// that printed it, not run to its 50th epoch, not retried), the class diverged on its attempt;
// the run goes on (stop-on-failure: true does not stop it) and ends 0.
func TestDiverged(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("faults/diverged.yml")
	r.wantCode(t, 0)
	res := e.faultResults()
	statuses := map[string]string{}
	for _, tr := range res.Tasks {
		statuses[tr.Name] = tr.Status
		if tr.Name == "nan" && (tr.Attempts != 1 || len(tr.AttemptList) != 1 || tr.AttemptList[0].Class != "diverged" ||
			!strings.Contains(tr.Reason, "diverged: loss was not a number at step 2")) {
			t.Errorf("nan: %d attempts %+v, reason %q; want one, diverged at step 2", tr.Attempts, tr.AttemptList, tr.Reason)
		}
	}
	if statuses["nan"] != "diverged" || statuses["lr=0.01"] != "ok" || statuses["lr=0.1"] != "ok" || statuses["after"] != "ok" {
		t.Errorf("statuses %v, want nan diverged, the rest ok", statuses)
	}
	if !strings.Contains(r.stdout, "[nan] diverged in ") || res.FailureClasses["diverged"] != 1 {
		t.Errorf("no diverged line, or failure_classes %v\n%v", res.FailureClasses, r)
	}
}

// TestFailFast: a misspelt command fails the first three trials alike (not-runnable), and
// runall starts no more of them: it ends 1 with one grouped error (the signature, the
// trials, the first one's last lines, what to do), the rest skipped.
func TestFailFast(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("faults/failfast.yml")
	r.wantCode(t, 1)
	counts := map[string]int{}
	for _, tr := range e.faultResults().Tasks {
		counts[tr.Status]++
		if tr.Status == "skipped" && !strings.Contains(tr.Reason, "fail-fast: the first 3 trials") {
			t.Errorf("%s skipped: %q, want fail-fast's reason", tr.Name, tr.Reason)
		}
	}
	if counts["failed"] != 3 || counts["skipped"] != 3 {
		t.Errorf("statuses %v, want 3 failed, 3 skipped\n%v", counts, r)
	}
	for _, want := range []string{
		`fail-fast: the first 3 trials of "sweep" failed alike`,
		"  signature: not-runnable exit 127: ",
		"  trials: n=1, n=2, n=3",
		"  n=1's last lines:",
		"pyhton3-not-a-command: command not found",
		"fail-fast: off on the block or in config",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output does not say %q\n%v", want, r)
		}
	}
}

// TestFailFastDiffering: failures that differ (another exit, another line) do not stop the
// sweep: every trial runs, even with fail-fast: 2.
func TestFailFastDiffering(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.runFile("faults/differ.yml")
	r.wantCode(t, 1)
	for _, tr := range e.faultResults().Tasks {
		if tr.Status != "failed" {
			t.Errorf("%s: %s (%s), want every trial run and failed\n%v", tr.Name, tr.Status, tr.Reason, r)
		}
	}
	if strings.Contains(r.stdout, "fail-fast:") {
		t.Errorf("fail-fast stopped a sweep whose failures differ\n%v", r)
	}
}
