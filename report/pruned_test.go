package report

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/results"
)

// TestReportPruned: a pruned trial says by which rule, in the table and on its curve, which
// ends where it stopped.
func TestReportPruned(t *testing.T) {
	in := sweep(3, 1, 4)
	tr := &in.Run.Tasks[1]
	tr.Status = results.StatusPruned
	tr.Reason = "exit code 143; stopped: asha: val_accuracy 0.01 at step 2 is not in the top 1/3"
	tr.MetricSeries["val_accuracy"] = tr.MetricSeries["val_accuracy"][:2]
	page := string(write(t, in))
	for _, want := range []string{">pruned (asha)<", "(pruned by asha at epoch 2)</title>", `class="curve pruned"`, "1 pruned"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not hold %q", want)
		}
	}
	if got := prunedBy(results.Task{Status: results.StatusPruned, Reason: "killed"}); got != "early-stop" {
		t.Errorf("prunedBy without a rule: %q", got)
	}
}
