package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

func TestJSONOutput(t *testing.T) {
	p := outPlan()
	c := &outClock{now: outT0}
	var buf bytes.Buffer
	out := NewJSON(Options{Plan: p, W: &buf, Color: true, Now: c.Now})
	outPlay(t, out, c, outScript(p), outResults())
	outNoEscapes(t, "JSON output", buf.Bytes())
	outGolden(t, "json.golden", buf.Bytes())

	var objs []map[string]any
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", len(objs)+1, err, sc.Bytes())
		}
		if m["time"] == nil || m["event"] == nil {
			t.Errorf("line %d lacks time or event: %s", len(objs)+1, sc.Bytes())
		}
		objs = append(objs, m)
	}
	count := map[string]int{}
	for _, m := range objs {
		count[m["event"].(string)]++
	}
	// 6 visible output lines (the report's is hidden), one waiting line per reason.
	want := map[string]int{"sync": 3, "start": 6, "output": 6, "end": 6, "waiting": 2, "skipped": 1, "status": 1, "run_end": 1, "memory": 1}
	for k, v := range want {
		if count[k] != v {
			t.Errorf("%d %q events, want %d", count[k], k, v)
		}
	}
	end := objs[len(objs)-1]
	if end["event"] != "run_end" || end["status"] != "failed" {
		t.Fatalf("last object: %v", end)
	}
	if tasks, _ := end["tasks"].([]any); len(tasks) != 6 {
		t.Errorf("run_end has %d tasks, want 6", len(tasks))
	}
	if counts, _ := end["counts"].(map[string]any); counts["failed"] != 1.0 || counts["ok"] != 3.0 {
		t.Errorf("run_end counts %v", end["counts"])
	}
}

func TestJSONCloseWithoutResults(t *testing.T) {
	var buf bytes.Buffer
	c := &outClock{now: outT0}
	out := NewJSON(Options{W: &buf, Now: c.Now})
	task := &plan.Task{ID: 1, Name: "a", Cmd: "true"}
	out.Event(event.Event{Kind: event.TaskEnded, Task: task, Status: results.StatusOK, Time: outT0})
	out.Event(event.Event{Kind: event.RunEnded, Status: results.StatusOK, Time: outT0})
	out.Close(nil)
	out.Close(nil)
	var objs []map[string]any
	for line := range bytes.Lines(buf.Bytes()) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m)
	}
	if len(objs) != 2 || objs[1]["event"] != "run_end" || objs[1]["status"] != "ok" {
		t.Fatalf("got %s", buf.Bytes())
	}
}
