package report

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestReportAttempts: a failed trial's status says its class, and its hover lists each
// attempt with its class and reason.
func TestReportAttempts(t *testing.T) {
	in := sweep(3, 1, 4)
	tr := &in.Run.Tasks[1]
	tr.Status, tr.Reason = results.StatusFailed, "exit code 1"
	tr.AttemptList = []results.Attempt{
		{N: 1, Class: "crashed", ExitCode: 1, Reason: "exit code 1"},
		{N: 2, Class: "oom", ExitCode: 1, Reason: "exit code 1"},
	}
	page := string(write(t, in))
	for _, want := range []string{">failed (oom)<", "attempt 1: crashed, exit code 1: exit code 1\nattempt 2: oom, exit code 1: exit code 1"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not hold %q", want)
		}
	}
}
