package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// A running trial's ETA in the live view is what its output says (its progress), counted
// down from when it said it, before what its earlier runs took; without progress, the
// estimate from history stays.
func TestLiveETAFromProgress(t *testing.T) {
	task := &plan.Task{ID: 1, Name: "train", Cmd: "train", ShowOutput: true}
	p := &plan.Plan{Config: plan.Config{MaxParallel: 4, ShowTaskTimes: true}, Tasks: []*plan.Task{task}}
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	l := newTestLive(p, &buf, c, 100, 20, false) // history says train takes 30 s
	l.Event(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1, Time: outT0})
	n := l.rs.node(task)
	if got := l.timeText(n, stRunning, outT0.Add(5*time.Second)); got != "5.0s eta 25.0s" {
		t.Fatalf("before any progress: %q, want the estimate from history", got)
	}
	prog := &results.Progress{Iter: 20, Of: 40, Rate: 0.5, Unit: "it", Source: "bar", ETASeconds: 40}
	l.Event(event.Event{Kind: event.TaskProgress, Task: task, Progress: prog, Time: outT0.Add(10 * time.Second)})
	if got := l.timeText(n, stRunning, outT0.Add(13*time.Second)); got != "13.0s eta 37.0s" {
		t.Fatalf("with progress: %q, want its ETA less the 3 s since it was said", got)
	}
}

// --output json has a progress event per progress told, with its figures.
func TestJSONProgress(t *testing.T) {
	task := &plan.Task{ID: 7, Name: "train", Cmd: "train"}
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	out := NewJSON(Options{Plan: &plan.Plan{Tasks: []*plan.Task{task}}, W: &buf, Now: c.Now})
	out.Event(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1, Time: outT0})
	prog := &results.Progress{Iter: 3, Of: 10, Rate: 1.5, Unit: "step", Source: "bar", ETASeconds: 4.7}
	out.Event(event.Event{Kind: event.TaskProgress, Task: task, Attempt: 1, Progress: prog, Time: outT0})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var got struct {
		Event    string           `json:"event"`
		TaskID   int              `json:"task_id"`
		Progress results.Progress `json:"progress"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatal(err)
	}
	if got.Event != "progress" || got.TaskID != 7 || got.Progress != *prog {
		t.Fatalf("got %+v from %s, want a progress event with %+v", got, lines[len(lines)-1], *prog)
	}
}

// A bar cleared with blanks (tqdm, before a line is written over it) leaves the live view's
// row showing what it showed.
func TestLiveKeepsLineOverBlankUpdate(t *testing.T) {
	task := &plan.Task{ID: 1, Name: "train", Cmd: "train", ShowOutput: true}
	rs := newRunState(&plan.Plan{Tasks: []*plan.Task{task}}, nil)
	for _, line := range []string{" 50%| 5/10\r", "                    \r"} {
		rs.apply(event.Event{Kind: event.TaskOutput, Task: task, Stream: "stderr", Line: line}, outT0)
	}
	if got := rs.node(task).last; got != " 50%| 5/10\r" {
		t.Fatalf("row shows %q, want the bar's state", got)
	}
}

// --output json keeps a bar's updates as plain does: one a StatusEvery, and its last line.
func TestJSONBarUpdates(t *testing.T) {
	task := &plan.Task{ID: 1, Name: "train", Cmd: "true", ShowOutput: true}
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	out := NewJSON(Options{Plan: &plan.Plan{Tasks: []*plan.Task{task}}, W: &buf, Now: c.Now, StatusEvery: 30 * time.Second})
	for i := range 40 {
		out.Event(event.Event{Kind: event.TaskOutput, Task: task, Stream: "stderr", Line: strings.Repeat("#", i+1) + "\r", Time: outT0.Add(time.Duration(i) * time.Second)})
	}
	out.Event(event.Event{Kind: event.TaskOutput, Task: task, Stream: "stderr", Line: "done", Time: outT0.Add(41 * time.Second)})
	var lines []string
	for l := range strings.Lines(buf.String()) {
		var ev struct{ Line string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, ev.Line)
	}
	if want := []string{"#", strings.Repeat("#", 31), "done"}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("output events' lines %q, want %q", lines, want)
	}
}
