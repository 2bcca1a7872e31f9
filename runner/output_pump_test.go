package runner

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
)

// heldWriter is a stdout nobody reads until release: each write waits for it.
type heldWriter struct {
	release chan struct{}
	mu      sync.Mutex
	b       bytes.Buffer
	writes  []int // each write's size
}

func (w *heldWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, len(p))
	return w.b.Write(p)
}

// The output pump never makes an emitter wait: with a stdout that takes nothing, a
// trial's 100,000 lines are all handed over, and once stdout takes writes again the
// output says how many lines it could not show and where they are, each line that it
// shows whole, in writes a pipe takes whole.
func TestOutputPumpNeverHoldsTheEmitter(t *testing.T) {
	task := &plan.Task{ID: 2, Name: "chatty", Cmd: "yes", ShowOutput: true}
	p := &plan.Plan{Tasks: []*plan.Task{task}}
	w := &heldWriter{release: make(chan struct{})}
	pump := startOutput(output.Options{Plan: p, W: w}, output.Plain, 0, "logs/run")
	pump.Event(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1}, nil)
	const n = 100_000
	for i := range n { // would block for good if the pump held the emitter
		pump.Event(event.Event{Kind: event.TaskOutput, Task: task, Attempt: 1, Stream: "stdout", Line: fmt.Sprint("line ", i)}, nil)
	}
	pump.Event(event.Event{Kind: event.TaskEnded, Task: task, Attempt: 1, End: event.EndFinal, Status: "ok"}, nil)
	close(w.release)
	lost, err := pump.close(nil)
	if lost != "" || err != nil {
		t.Fatalf("close: lost %q, %v", lost, err)
	}
	out := w.b.String()
	shown := strings.Count(out, "[chatty] line ")
	var skipped int
	if _, after, ok := strings.Cut(out, "status: "); ok {
		fmt.Sscanf(after, "%d lines of output not shown", &skipped)
	}
	if !strings.Contains(out, " lines of output not shown: stdout did not take them in time; every line is in the tasks' logs in logs/run\n") ||
		shown+skipped != n || shown == n {
		t.Errorf("%d lines shown and %d said skipped, want %d in all, some skipped\n%.500s", shown, skipped, n, out)
	}
	if !strings.Contains(out, "[chatty] ok (exit code 0)") {
		t.Errorf("the task's end is not shown\n%.500s", out[max(0, len(out)-500):])
	}
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "[chatty] line ") && !strings.HasSuffix(l, "\n") || strings.Count(l, "[chatty]") > 1 {
			t.Fatalf("a line is not whole: %q", l)
		}
	}
	for _, size := range w.writes {
		if size > pipeBuf {
			t.Fatalf("a write of %d bytes, more than a pipe takes whole (%d)", size, pipeBuf)
		}
	}
}

// brokenPipe is a stdout whose reader is gone.
type brokenPipe struct{ writes int }

func (b *brokenPipe) Write([]byte) (int, error) {
	b.writes++
	return 0, fmt.Errorf("write |1: %w", syscall.EPIPE)
}

// A closed stdout fails neither the output nor the run: the pump stops writing at the
// first broken pipe and says how much it lost.
func TestOutputPumpClosedStdout(t *testing.T) {
	task := &plan.Task{ID: 2, Name: "chatty", Cmd: "yes", ShowOutput: true}
	w := &brokenPipe{}
	pump := startOutput(output.Options{Plan: &plan.Plan{Tasks: []*plan.Task{task}}, W: w}, output.JSON, 0, "logs/run")
	for i := range 1000 {
		pump.Event(event.Event{Kind: event.TaskOutput, Task: task, Attempt: 1, Stream: "stdout", Line: fmt.Sprint("line ", i)}, nil)
	}
	lost, err := pump.close(nil)
	if err != nil || w.writes != 1 || !strings.HasPrefix(lost, "stdout: write |1: broken pipe: ") ||
		!strings.HasSuffix(lost, " lines of output lost; every line is in the tasks' logs in logs/run") {
		t.Errorf("close: lost %q, error %v, %d writes tried; want the loss said, no error, one write", lost, err, w.writes)
	}
	if !errors.Is(pump.w.err, syscall.EPIPE) {
		t.Errorf("first error %v, want EPIPE", pump.w.err)
	}
}
