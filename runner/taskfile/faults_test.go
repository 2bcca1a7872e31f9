package taskfile

import "testing"

// TestDivergedOnWatches: auto watches the metrics it is given and any whose name holds
// "loss"; any watches all; a list its names; off none.
func TestDivergedOnWatches(t *testing.T) {
	auto := []string{"val_accuracy"}
	for _, tc := range []struct {
		rule   DivergedOn
		metric string
		want   bool
	}{
		{DivergedOn{}, "val_loss", true},
		{DivergedOn{}, "Loss", true},
		{DivergedOn{}, "val_accuracy", true},
		{DivergedOn{}, "grad_norm", false},
		{DivergedOn{Any: true}, "grad_norm", true},
		{DivergedOn{Names: []string{"grad_norm"}}, "grad_norm", true},
		{DivergedOn{Names: []string{"grad_norm"}}, "loss", false},
		{DivergedOn{Off: true}, "loss", false},
	} {
		if got := tc.rule.Watches(tc.metric, auto); got != tc.want {
			t.Errorf("%s watches %s: %v, want %v", tc.rule, tc.metric, got, tc.want)
		}
	}
}
