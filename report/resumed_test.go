package report

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestReportResumed (issue 27, point 1): a trial resumed from its checkpoint is marked on
// its curve at the step it went on from.
func TestReportResumed(t *testing.T) {
	in := sweep(3, 1, 4)
	tr := &in.Run.Tasks[1]
	tr.Resumes = []results.Resume{{Step: 2, RunID: "pod-2"}, {Step: 9}} // the second is past its curve: not drawn
	page := string(write(t, in))
	if n := strings.Count(page, `<circle class="resumed"`); n != 1 {
		t.Errorf("%d resume marks, want 1", n)
	}
	if want := "resumed from its checkpoint at epoch 2 (run pod-2)"; !strings.Contains(page, want) {
		t.Errorf("the report does not hold %q", want)
	}
}
