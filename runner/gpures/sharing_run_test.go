package gpures

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/sharing"
)

// sharedPlan is a sweep of two trials of one kind that share by progress beside one that shares by
// memory, with a history in dir.
func sharedPlan(t *testing.T, dir string) (*plan.Plan, *history.History) {
	t.Helper()
	yml := "tasks:\n  - name: sweep\n    parallel-tasks:\n" +
		"      - {name: <replace>, for-each: [a, b], cmd: echo <replace>, gpu-memory: 1GiB, gpu-sharing: progress}\n" +
		"      - {name: m, cmd: m, gpu-memory: 1GiB}\n"
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return p, history.Load(filepath.Join(dir, "logs"), p)
}

// TestGPUSharingRates: the run's side of gpu-sharing: progress measures a trial's rate from
// the change of its steps over a window (one reaching back before its GPU's mix changed
// judges nothing), says each decision on
// the stream, keeps the figures for the results and each rate measured alone for the
// history, under the model of the GPU it was measured on; a decision that may let a trial in
// wakes the trials that wait; a trial that shares by memory is neither gated nor told.
func TestGPUSharingRates(t *testing.T) {
	dir := t.TempDir()
	p, hist := sharedPlan(t, dir)
	woken := 0
	s := newGPUSharing(p, hist, nil, nil, false, func() { woken++ })
	if s == nil {
		t.Fatal("no gpuSharing for a plan with gpu-sharing: progress")
	}
	s.clock.window = windowRule{least: 10 * time.Millisecond, most: 20 * time.Millisecond, steps: windowSteps}
	s.ctl = sharing.New(sharing.Options{MinWindow: 10 * time.Millisecond})
	a, b, m := p.Tasks[0].Parallel[0], p.Tasks[0].Parallel[1], p.Tasks[0].Parallel[2]
	if s.gate(m) != nil {
		t.Error("a trial that shares by memory is gated")
	}
	var said []string
	emit := func(ev event.Event) { said = append(said, ev.Line) }
	progress := func(t *plan.Task, iter float64) {
		s.Event(event.Event{Kind: event.TaskProgress, Task: t, Progress: &results.Progress{Iter: iter}}, emit)
	}
	ta, tb := &sched.Trial{Task: a}, &sched.Trial{Task: b}
	s.sampled(admit.Sample{Devices: []gpu.Device{{Name: "NVIDIA H100 80GB HBM3"}}})
	s.placed(ta, &admit.Placement{Devices: []int{0}})
	progress(a, 0) // starts a's window
	time.Sleep(30 * time.Millisecond)
	progress(a, 3) // 3 steps over the window: a's rate alone
	if len(said) != 1 || !strings.HasPrefix(said[0], "gpu-sharing: gpu 0: a alone runs") {
		t.Fatalf("said %q, want a measured alone", said)
	}
	if woken != 1 {
		t.Errorf("a measured alone woke the waiting trials %d times, want once: they would wait for the GPUs' next measurement", woken)
	}
	if ok, why := s.gate(b)(0); !ok {
		t.Fatalf("b refused onto a GPU whose mix was judged: %s", why)
	}
	s.placed(tb, &admit.Placement{Devices: []int{0}})
	time.Sleep(30 * time.Millisecond)
	progress(a, 9) // a's window restarted at the change: this starts a fresh one
	progress(b, 0)
	if len(said) != 1 {
		t.Errorf("a window reaching back before b joined judged the mix: %q", said)
	}
	time.Sleep(30 * time.Millisecond)
	progress(a, 10)
	progress(b, 1)
	if len(said) != 2 || !strings.Contains(said[1], "before b joined") {
		t.Fatalf("said %q, want the pair judged against a alone", said)
	}
	res := s.results()
	if len(res.Trials) != 2 || res.Trials[0].AloneFrom != sharing.FromMeasured || res.Trials[1].Shared <= 0 || len(res.Decisions) != 2 {
		t.Errorf("results %+v", res)
	}
	s.left(ta)
	s.left(tb)
	s.remember()
	if r, ok := hist.RateAlone(a.Key, "NVIDIA H100 80GB HBM3"); !ok || r <= 0 {
		t.Errorf("a's rate alone was not kept in the history for its GPU's model: %v %v", r, ok)
	}
	if r, ok := hist.RateAlone(a.Key, "NVIDIA A100-SXM4-40GB"); ok {
		t.Errorf("a's rate alone, measured on an H100, was kept for an A100: %v", r)
	}
	if _, ok := hist.RateAlone(b.Key, "NVIDIA H100 80GB HBM3"); ok {
		t.Error("b, never measured alone, has a rate alone in the history")
	}
}

// TestRateWindowLastsAsTheStepsNeed: a rate window closes once it is minRateWindow long and
// counts windowSteps steps (at 10 steps a second, about a second), else at rateWindow
// whatever its steps (issue 42, point 4).
func TestRateWindowLastsAsTheStepsNeed(t *testing.T) {
	rule := windowRule{least: minRateWindow, most: rateWindow, steps: windowSteps}
	w := rateWin{at: time.Second, iter: 100, set: true}
	for _, c := range []struct {
		after time.Duration
		iter  float64
		want  bool
	}{
		{time.Second, 110, true},             // 10 steps a second: a second will do
		{time.Second, 104, false},            // 4 steps: too few to tell rates apart
		{500 * time.Millisecond, 150, false}, // many steps, but before progress is told again
		{rateWindow, 101, true},              // a slow trial: at rateWindow whatever its steps
	} {
		if got := rule.closes(w, w.at+c.after, c.iter); got != c.want {
			t.Errorf("after %v at %v steps: closes %v, want %v", c.after, c.iter-w.iter, got, c.want)
		}
	}
}
