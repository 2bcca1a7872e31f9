package plan

import (
	"strings"
	"testing"
)

// TestEarlyStopModeNotInherited: early stopping on a metric other than the objective's takes
// no mode from it (val_loss under val_accuracy, max, pruned the 5 best trials), and a mode that
// contradicts the objective's for the same metric is refused; where the metric is the
// objective's, its mode is taken.
func TestEarlyStopModeNotInherited(t *testing.T) {
	for _, tc := range []struct {
		early    string
		problem  string // "" for none
		wantMode string
	}{
		{"{method: asha, metric: val_loss}", "early-stop: mode: missing: val_loss is not the objective's metric (val_accuracy), so it does not take the objective's mode max: set mode: max or min for val_loss", ""},
		{"{method: median, metric: val_accuracy, mode: min}", "early-stop: mode: min contradicts the objective's mode max for the same metric val_accuracy", ""},
		{"{method: asha, metric: val_loss, mode: min}", "", "min"},
		{"{method: asha}", "", "max"},
		{"{method: asha, metric: val_accuracy}", "", "max"},
	} {
		for _, where := range []string{"config", "block"} {
			text := "config:\n  objective: {metric: val_accuracy, mode: max}\n"
			block := "  - name: sweep\n    parallel-tasks: [{cmd: train}]\n"
			if where == "config" {
				text += "  early-stop: " + tc.early + "\n"
			} else {
				block += "    early-stop: " + tc.early + "\n"
			}
			p, err := loadYAML(t, text+"tasks:\n"+block, LoadOptions{})
			switch {
			case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
				t.Errorf("%s early-stop %s: got %v, want %q", where, tc.early, err, tc.problem)
			case tc.problem == "" && err != nil:
				t.Errorf("%s early-stop %s: %v", where, tc.early, err)
			case tc.problem == "" && p.Tasks[0].EarlyStop.Mode != tc.wantMode:
				t.Errorf("%s early-stop %s: mode %q, want %q", where, tc.early, p.Tasks[0].EarlyStop.Mode, tc.wantMode)
			}
		}
	}
}
