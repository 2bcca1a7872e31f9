package plan

import (
	"strings"
	"testing"
)

// TestOnOOM: on-oom on a block is its trials' (defaults min 1, times 3), a trial's own wins;
// its param is the trial's, and a matrix trial with one has a space to vary.
func TestOnOOM(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - name: block
    on-oom: {halve: batch}
    parallel-tasks:
      - {name: "a <batch>", matrix: {batch: [64]}, cmd: "train --batch <batch>"}
      - {name: "b <bs>", matrix: {bs: [32]}, on-oom: {halve: bs, min: 8, times: 2, keep-checkpoint: true}, cmd: "train --bs <bs>"}
`, LoadOptions{})
	a, b := p.Tasks[0].Parallel[0], p.Tasks[0].Parallel[1]
	if o := OnOOMOf(a); o == nil || o.Halve != "batch" || o.Min != 1 || o.Times != 3 || o.KeepCheckpoint || a.Space == nil {
		t.Errorf("a: on-oom %+v, space %v; want the block's, halve batch, min 1, times 3, with a space", o, a.Space)
	}
	if o := OnOOMOf(b); o == nil || o.Halve != "bs" || o.Min != 8 || o.Times != 2 || !o.KeepCheckpoint {
		t.Errorf("b: on-oom %+v; want its own", o)
	}
	if ParamValue(a.Params, "batch") != "64" || a.Variant([]Param{{Name: "batch", Value: "32"}}).Cmd != "train --batch 32" {
		t.Errorf("a: param %q, its variant's command %q", ParamValue(a.Params, "batch"), a.Variant([]Param{{Name: "batch", Value: "32"}}).Cmd)
	}
}

// TestOnOOMRefused: a bad on-oom is refused at its line and column, saying the form.
func TestOnOOMRefused(t *testing.T) {
	for _, tc := range []struct{ name, onOOM, want string }{
		{"not a mapping", "on-oom: batch", "3:15: on-oom: want {halve: PARAM, min: N, times: K, keep-checkpoint: true|false}"},
		{"no halve", "on-oom: {min: 2}", "3:15: on-oom: want {halve: PARAM"},
		{"unknown key", "on-oom: {halve: batch, tims: 2}", `3:30: unknown key "tims" (did you mean "times"?)`},
		{"times 0", "on-oom: {halve: batch, times: 0}", "3:37: times: want a whole number of at least 1"},
		{"not its param", "on-oom: {halve: lr}", `3:23: on-oom: halve: <lr> is not a param of trial "t 64" (its params: <batch>)`},
		{"below min", "on-oom: {halve: batch, min: 100}", `3:23: on-oom: halve: <batch> is "64" in trial "t 64": want a whole number of at least min (100)`},
		{"keep-checkpoint", "on-oom: {halve: batch, keep-checkpoint: maybe}", "3:47: keep-checkpoint: want true or false"},
	} {
		text := "tasks:\n  - parallel-tasks:\n    - " + tc.onOOM + "\n      name: t <batch>\n      matrix: {batch: [64]}\n      cmd: train <batch>\n"
		_, err := loadYAML(t, text, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
