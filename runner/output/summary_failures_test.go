package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestSummaryGroupsFailures: failed trials are grouped by class and signature, the largest
// group first, with their names; the failure report says each one's class.
func TestSummaryGroupsFailures(t *testing.T) {
	failed := func(name, class, sig string) results.Task {
		return results.Task{Name: name, Status: results.StatusFailed, ExitCode: 1, Attempts: 1,
			AttemptList: []results.Attempt{{N: 1, Class: class, ExitCode: 1, Signature: sig}}}
	}
	res := &results.Run{Status: results.StatusFailed, Tasks: []results.Task{
		failed("a", "oom", "oom exit 1: CUDA out of memory"),
		failed("b", "crashed", "crashed exit 1: ValueError"),
		failed("c", "crashed", "crashed exit 1: ValueError"),
		{Name: "d", Status: results.StatusOK},
	}}
	var b bytes.Buffer
	WriteSummary(&b, res, SummaryOptions{FailureReport: true})
	out := b.String()
	want := "Failures by class and signature:\n  2× crashed exit 1: ValueError\n    b, c\n  1× oom exit 1: CUDA out of memory\n    a\n"
	if !strings.Contains(out, want) {
		t.Errorf("summary:\n%s\nwant it to hold:\n%s", out, want)
	}
	if !strings.Contains(out, "a: failed with exit code 1 (oom)") {
		t.Errorf("the failure report does not say a's class:\n%s", out)
	}
}
