package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// The results recorder learns a command's result from its events alone: a requeue's count,
// and the final end's Detail.
func TestLedgerLearnsFromEvents(t *testing.T) {
	task := &plan.Task{ID: 7, Name: "train", Cmd: "python train.py"}
	l := newLedger(mask.New(nil, nil, &plan.Plan{}, nil))
	s := &event.Stream{}
	s.Add(l)
	s.Emit(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1, Devices: []string{"GPU-0"}, Need: 4 << 30})
	s.Emit(event.Event{Kind: event.TaskEnded, Task: task, Attempt: 1, End: event.EndRequeue, Requeues: 1, Status: results.StatusFailed})
	s.Emit(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 2, Devices: []string{"GPU-0"}, Need: 6 << 30})
	s.Emit(event.Event{Kind: event.TaskEnded, Task: task, Attempt: 2, End: event.EndFinal, Status: results.StatusFailed, ExitCode: -1,
		Metrics: map[string]float64{"loss": 0.5},
		Detail: &event.Detail{StdoutTail: []string{"epoch 2"}, StderrTail: []string{"killed"},
			OnGPU: true, GPUMemory: 6 << 30, PeakGPUMemory: 5 << 30, PeakGPUMemorySource: "process",
			OnHost: true, HostMemory: 1 << 30, PeakHostMemory: 900 << 20, Signal: "SIGKILL",
			Metrics: map[string]float64{"loss": 0.5}, MetricSeries: map[string][]float64{"loss": {0.9, 0.5}},
			MetricWarnings: []string{"metrics file: not found"}}})
	got := l.result(task)
	if got.Status != results.StatusFailed || got.Attempts != 2 || got.OOMRequeues != 1 || got.Signal != "SIGKILL" {
		t.Errorf("status %s, attempts %d, requeues %d, signal %q; want failed, 2, 1, SIGKILL", got.Status, got.Attempts, got.OOMRequeues, got.Signal)
	}
	if got.GPUMemory != 6<<30 || got.PeakGPUMemory != 5<<30 || got.PeakGPUMemorySource != "process" || got.HostMemory != 1<<30 || got.PeakHostMemory != 900<<20 {
		t.Errorf("memory: GPU %d peak %d (%q), host %d peak %d", got.GPUMemory, got.PeakGPUMemory, got.PeakGPUMemorySource, got.HostMemory, got.PeakHostMemory)
	}
	if !slices.Equal(got.StdoutTail, []string{"epoch 2"}) || !slices.Equal(got.StderrTail, []string{"killed"}) {
		t.Errorf("tails %q, %q", got.StdoutTail, got.StderrTail)
	}
	if got.Metrics["loss"] != 0.5 || !slices.Equal(got.MetricSeries["loss"], []float64{0.9, 0.5}) || len(got.MetricWarnings) != 1 {
		t.Errorf("metrics %v, series %v, warnings %q", got.Metrics, got.MetricSeries, got.MetricWarnings)
	}
}

// A trial's time is what it ran: the time it waited paused at its checkpoint between two
// attempts, or at the end when it was ended while paused, is not counted in it.
func TestLedgerLeavesPausesOut(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name        string
		end         int // when it ended for good
		resumed     bool
		ran, paused time.Duration
	}{
		{name: "resumed", end: 13, resumed: true, ran: 5 * time.Second, paused: 8 * time.Second},
		{name: "ended while paused", end: 30, ran: 2 * time.Second, paused: 28 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := &plan.Task{ID: 1, Name: "train"}
			l := newLedger(mask.New(nil, nil, &plan.Plan{}, nil))
			s := &event.Stream{}
			s.Add(l)
			s.Emit(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1, Time: at(0)})
			s.Emit(event.Event{Kind: event.TaskEnded, Task: task, Attempt: 1, End: event.EndPause, Status: results.StatusPaused, Time: at(2)})
			if tc.resumed {
				s.Emit(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 2, Time: at(10)})
			}
			d, _ := l.ending(task, at(tc.end))
			s.Emit(event.Event{Kind: event.TaskEnded, Task: task, End: event.EndFinal, Status: results.StatusPruned, Time: at(tc.end), Duration: d})
			got := l.result(task)
			if got.Duration() != tc.ran || d != tc.ran || got.PausedSeconds != tc.paused.Seconds() {
				t.Errorf("ran %v (said at its end: %v), paused %vs; want %v and %v", got.Duration(), d, got.PausedSeconds, tc.ran, tc.paused)
			}
		})
	}
}

// The ledger decides a task's status by how its attempt ended (Event.End), as it did by
// the three flags: a retry leaves it running, a requeue pending, a pause paused, a final
// end with its status; a TaskEnded that says no end never reaches it.
func TestLedgerDecidesByEnd(t *testing.T) {
	for end, want := range map[event.End]results.Status{event.EndNone: results.StatusRunning,
		event.EndRetry: results.StatusRunning, event.EndRequeue: results.StatusPending,
		event.EndPause: results.StatusPaused, event.EndFinal: results.StatusFailed} {
		task := &plan.Task{ID: 3, Name: "train", Cmd: "python train.py"}
		l := newLedger(mask.New(nil, nil, &plan.Plan{}, nil))
		s := &event.Stream{}
		s.Add(l)
		s.Emit(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1})
		s.Emit(event.Event{Kind: event.TaskEnded, Task: task, Attempt: 1, End: end, Status: results.StatusFailed, ExitCode: 1})
		if got := l.result(task).Status; got != want {
			t.Errorf("after an attempt that ended as %s: status %s, want %s", end, got, want)
		}
	}
}
