package output

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// TestPlainDiverged: a trial ended as diverged says so on its line, and the status line
// counts it as diverged, not stopped.
func TestPlainDiverged(t *testing.T) {
	a := &plan.Task{ID: 2, Name: "a", Cmd: "train", ShowOutput: true}
	p := &plan.Plan{File: "tasks.yml", Config: plan.Config{MaxParallel: 2, ShowOutput: true},
		Tasks: []*plan.Task{{ID: 1, Name: "sweep", Parallel: []*plan.Task{a, {ID: 3, Name: "b", Cmd: "train"}}}}}
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	out := NewPlain(Options{Plan: p, W: &buf, Now: c.Now, StatusEvery: time.Second})
	out.Event(event.Event{Kind: event.TaskStarted, Task: a, Attempt: 1, Time: outT0})
	c.now = outT0.Add(2 * time.Second)
	out.Event(event.Event{Kind: event.TaskEnded, End: event.EndFinal, Task: a, Attempt: 1, Status: results.StatusDiverged, ExitCode: 143,
		Duration: 2 * time.Second, Reason: "stopped: diverged: loss was not a number at step 3", Time: c.now,
		Try: &results.Attempt{N: 1, Class: "diverged", ExitCode: 143}})
	c.now = outT0.Add(4 * time.Second)
	out.Tick(c.now)
	got := buf.String()
	for _, want := range []string{"[a] diverged in 2.0s: stopped: diverged: loss was not a number at step 3\n", "1/2 done, 1 diverged"} {
		if !strings.Contains(got, want) {
			t.Errorf("plain output does not hold %q:\n%s", want, got)
		}
	}
}
