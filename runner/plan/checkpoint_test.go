package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/earlystop"
)

// TestCheckpointKey (issue 27, point 1): checkpoint: DIR on a trial, with placeholders, in its
// short and long forms.
func TestCheckpointKey(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - parallel-tasks:
      - name: lr=<lr>
        cmd: train --lr <lr>
        matrix: {lr: [0.1, 0.01]}
        checkpoint: ckpt/<lr>
      - name: long
        cmd: train
        checkpoint: {dir: ckpt/long, every: 5s, wait: 2m}
`, LoadOptions{})
	trials := p.Tasks[0].Parallel
	want := []Checkpoint{
		{Dir: "ckpt/0.1", Every: DefaultCheckpointEvery, Wait: DefaultCheckpointWait},
		{Dir: "ckpt/0.01", Every: DefaultCheckpointEvery, Wait: DefaultCheckpointWait},
		{Dir: "ckpt/long", Every: 5 * time.Second, Wait: 2 * time.Minute},
	}
	for i, w := range want {
		got := trials[i].Checkpoint
		if got == nil {
			t.Fatalf("%s: no checkpoint", trials[i].Name)
		}
		if got.Dir != w.Dir || got.Every != w.Every || got.Wait != w.Wait {
			t.Errorf("%s: checkpoint %+v, want %+v", trials[i].Name, *got, w)
		}
		if got.Pos.Line == 0 || got.Pos.Column == 0 {
			t.Errorf("%s: checkpoint has no position: %v", trials[i].Name, got.Pos)
		}
	}
}

// TestCheckpointCheck (issue 27, point 1): check refuses what cannot be a trial's
// checkpoint, at the key's file:line:col.
func TestCheckpointCheck(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"on a top-level task", `
tasks:
  - cmd: train
    checkpoint: ckpt
`, "tasks.yml:4:5: checkpoint: is a trial's"},
		{"on a step", `
tasks:
  - parallel-tasks:
      - tasks:
          - cmd: train
            checkpoint: ckpt
`, "tasks.yml:6:13: checkpoint: is a trial's"},
		{"empty", `
tasks:
  - parallel-tasks:
      - cmd: train
        checkpoint: ""
`, "tasks.yml:5:21: checkpoint: want the directory"},
		{"the working directory", `
tasks:
  - parallel-tasks:
      - cmd: train
        checkpoint: ./
`, `tasks.yml:5:21: checkpoint: "./" cannot be a trial's checkpoint directory`},
		{"shared by two trials", `
tasks:
  - parallel-tasks:
      - name: a
        cmd: train a
        checkpoint: ckpt
      - name: b
        cmd: train b
        checkpoint: ckpt
`, `tasks.yml:9:9: checkpoint: ckpt is also trial "a"'s`},
		{"a matrix without its placeholder", `
tasks:
  - parallel-tasks:
      - cmd: train <lr>
        matrix: {lr: [1, 2]}
        checkpoint: ckpt
`, `tasks.yml:6:9: checkpoint: ckpt is also trial "train 1"'s`},
		{"a misspelt key of the long form", `
tasks:
  - parallel-tasks:
      - cmd: train
        checkpoint: {dir: ckpt, evry: 1s}
`, `tasks.yml:5:33: unknown key "evry" (did you mean "every"?)`},
		{"the long form without dir", `
tasks:
  - parallel-tasks:
      - cmd: train
        checkpoint: {wait: 1m}
`, "tasks.yml:5:21: checkpoint: dir: missing"},
		{"a wait that is no duration", `
tasks:
  - parallel-tasks:
      - cmd: train
        checkpoint: {dir: ckpt, wait: soon}
`, "tasks.yml:5:39: checkpoint: wait: want a duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadYAML(t, tc.yaml, LoadOptions{})
			if err == nil {
				t.Fatalf("loaded; want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestCheckpointVars: a ${VAR} in checkpoint: must be set, as in metrics:.
func TestCheckpointVars(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - parallel-tasks:
      - cmd: train
        checkpoint: ${NOT_SET_ANYWHERE}/ckpt
`, LoadOptions{})
	err := p.CheckVars(nil)
	if err == nil || !strings.Contains(err.Error(), "tasks.yml:5:9: checkpoint: ${NOT_SET_ANYWHERE} is unset") {
		t.Errorf("CheckVars: %v, want checkpoint's unset variable at 5:9", err)
	}
}

// TestPausingRuleNeedsCheckpoint (issue 27, point 5): a rule that pauses trials needs each
// trial's checkpoint:, said at early-stop's line:col.
func TestPausingRuleNeedsCheckpoint(t *testing.T) {
	for _, method := range []string{"sha", "hyperband", "pbt"} {
		l := &loader{src: &sources{path: "tasks.yml"}}
		b := &Task{Pos: Pos{File: "tasks.yml", Line: 3, Column: 5}, EarlyStop: &earlystop.Config{Method: method},
			Parallel: []*Task{{Name: "a", Checkpoint: &Checkpoint{Dir: "ckpt/a"}}, {Name: "b"}}}
		l.src.checkPausingRule(b, nil)
		if len(l.src.problems) != 1 || !strings.Contains(l.src.problems[0].Msg, `trial "b" has no checkpoint`) ||
			l.src.problems[0].Pos != b.Pos {
			t.Errorf("%s: problems %v, want one at %v about trial b", method, l.src.problems, b.Pos)
		}
	}
	l := &loader{src: &sources{path: "tasks.yml"}}
	l.src.checkPausingRule(&Task{EarlyStop: &earlystop.Config{Method: earlystop.ASHA}, Parallel: []*Task{{Name: "a"}}}, nil)
	if len(l.src.problems) != 0 {
		t.Errorf("asha stops, it does not pause: %v", l.src.problems)
	}
}
