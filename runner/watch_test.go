package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/mask"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// watcher is a Server that serves nothing: it keeps the results the run's view gave while
// a trial had reported two values, and after the run's end.
type watcher struct {
	view      View
	mid, end  *results.Run
	final     *results.Run // RunEnded's
	release   string       // a file the trial waits for: written once mid is taken
	addrAsked bool
}

func (w *watcher) Serve(v View) (string, error) {
	w.view, w.addrAsked = v, true
	return "127.0.0.1:0", nil
}

func (w *watcher) Event(ev event.Event, _ func(event.Event)) {
	switch {
	case ev.Kind == event.TaskMetric && ev.Task.Name == "slow" && ev.Step == 2:
		w.mid = w.view.Results()
		_ = os.WriteFile(w.release, nil, 0o644)
	case ev.Kind == event.RunEnded:
		w.final = ev.Results
		w.end = w.view.Results()
	}
}

// TestServerViewIsTheResults: a server's view of a running run is the results gathered as
// results.json is, running trials included: a running trial's metrics and curve so far, a
// waiting one pending, the run running with no finish time; once the run ended, its tasks
// are the results' own. (A waiting trial's reason: TestLedgerLiveForgetsAtTheEnd.)
func TestServerViewIsTheResults(t *testing.T) {
	dir := t.TempDir()
	w := &watcher{release: filepath.Join(dir, "go")}
	res, out, err := runFile(t, `
config: {max-parallel-commands: 1}
tasks:
  - name: sweep
    parallel-tasks:
      - name: slow
        cmd: 'echo runall-metric acc=0.1; echo runall-metric acc=0.2; while [ ! -e "$RELEASE" ]; do sleep 0.05; done'
      - name: later
        cmd: echo runall-metric acc=0.5
`, Options{Server: w, Environ: []string{"RELEASE=" + w.release}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !w.addrAsked || w.view.Metrics == nil {
		t.Fatalf("the server was not started with a view")
	}
	if w.mid == nil {
		t.Fatalf("the trial's second value was not seen\n%s", out)
	}
	if w.mid.Status != results.StatusRunning || !w.mid.FinishedAt.IsZero() {
		t.Errorf("mid-run: status %s, finished %v; want running, none", w.mid.Status, w.mid.FinishedAt)
	}
	mid := byName(w.mid)
	if s := mid["slow"]; s.Status != results.StatusRunning || !slices.Equal(s.MetricSeries["acc"], []float64{0.1, 0.2}) || s.Metrics["acc"] != 0.2 {
		t.Errorf("mid-run, slow: %s, series %v, last %v; want running, [0.1 0.2], 0.2", s.Status, s.MetricSeries, s.Metrics)
	}
	if l := mid["later"]; l.Status != results.StatusPending {
		t.Errorf("mid-run, later: %s; want pending (not skipped: it has not run yet)", l.Status)
	}
	end, final := tasksJSON(t, w.end), tasksJSON(t, res)
	if end != final || tasksJSON(t, w.final) != final {
		t.Errorf("after the run, the view's tasks differ from the results':\n%s\nwant\n%s", end, final)
	}
}

func tasksJSON(t *testing.T, r *results.Run) string {
	t.Helper()
	b, err := json.Marshal(r.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLedgerLiveForgetsAtTheEnd: what a task reported while it ran is its result's only
// until its final event, whose Detail is the record: a task's final result is unchanged by
// what was seen live.
func TestLedgerLiveForgetsAtTheEnd(t *testing.T) {
	task := &plan.Task{ID: 3, Name: "train", Cmd: "train"}
	l := newLedger(mask.New(nil, nil, &plan.Plan{}, nil))
	s := &event.Stream{}
	s.Add(l)
	p := &plan.Plan{Tasks: []*plan.Task{task}}
	logs := func(*plan.Task) string { return "" }
	s.Emit(event.Event{Kind: event.TaskWaiting, Task: task, Reason: "no GPU has 4 GiB free"})
	if got := l.tasks(p, logs, results.StatusSkipped)[0]; got.Status != results.StatusPending || got.Reason != "no GPU has 4 GiB free" {
		t.Errorf("waiting: %s %q", got.Status, got.Reason)
	}
	s.Emit(event.Event{Kind: event.TaskStarted, Task: task, Attempt: 1, Devices: []string{"GPU-0"}, Need: 4 << 30})
	s.Emit(event.Event{Kind: event.TaskMetric, Task: task, Metric: "loss", Value: 0.9, Step: 1})
	s.Emit(event.Event{Kind: event.TaskMetric, Task: task, Metric: "loss", Value: 0.7, Step: 2})
	s.Emit(event.Event{Kind: event.TaskMemory, Task: task, Memory: 3 << 30, Peak: 5 << 30})
	got := l.tasks(p, logs, results.StatusSkipped)[0]
	if got.Reason != "" || got.PeakGPUMemory != 5<<30 || !slices.Equal(got.MetricSeries["loss"], []float64{0.9, 0.7}) {
		t.Errorf("running: reason %q, peak %d, series %v", got.Reason, got.PeakGPUMemory, got.MetricSeries)
	}
	s.Emit(event.Event{Kind: event.TaskEnded, Task: task, Attempt: 1, End: event.EndFinal, Status: results.StatusOK,
		Detail: &event.Detail{OnGPU: true, GPUMemory: 4 << 30, PeakGPUMemory: 4 << 30, Metrics: map[string]float64{"loss": 0.5}}})
	got = l.tasks(p, logs, results.StatusSkipped)[0]
	if got.PeakGPUMemory != 4<<30 || got.MetricSeries != nil || got.Metrics["loss"] != 0.5 || len(l.byIDLive) != 0 {
		t.Errorf("ended: peak %d, series %v, metrics %v, %d live entries left; want the Detail's alone", got.PeakGPUMemory, got.MetricSeries, got.Metrics, len(l.byIDLive))
	}
}
