package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/results"
)

// Issue 34, rule 3: the record says what happened: a resumed trial's record while it runs,
// an exploited trial's own curve. The trials are the shell scripts of rounds_rule3_test.go.

// resumeWatcher is a Server that keeps the run's view of trial a as it reports step 4, after
// its resume from step 2.
type resumeWatcher struct {
	view View
	mid  *results.Task
}

func (w *resumeWatcher) Serve(v View) (string, error) { w.view = v; return "127.0.0.1:0", nil }

func (w *resumeWatcher) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind == event.TaskMetric && ev.Task.Name == "a" && ev.Step == 4 && w.mid == nil {
		a := byName(w.view.Results())["a"]
		w.mid = &a
	}
}

// TestResumedTrialLiveRecord (issue 34, rule 3): while a resumed trial runs, the live page's
// and /api/run's record of it (the run's view) holds its restored steps (its curve does not
// start again at step 1 with the values of steps 3...) and its resumes, as its result will.
func TestResumedTrialLiveRecord(t *testing.T) {
	h := &halver{at: 2, resumeOn: "b"}
	w := &resumeWatcher{}
	res, out, err := runFile(t, `
config: {max-parallel-commands: 1, order: file}
tasks:
  - name: sweep
    parallel-tasks:
      - name: <n>
        matrix: {n: [a, b]}
        cmd: |
          `+checkpointing+`
        checkpoint: ck/<n>
`, Options{Consumers: []event.Consumer{h}, Server: w, Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if w.mid == nil {
		t.Fatalf("a's step 4 was not seen\n%s", out)
	}
	if got := w.mid.MetricSeries["loss"]; !slices.Equal(got, []float64{1, 2, 3, 4}) || w.mid.Status != results.StatusRunning {
		t.Errorf("running after its resume, a: %s, loss %v; want running, [1 2 3 4]: its restored steps, then its own", w.mid.Status, got)
	}
	if len(w.mid.Resumes) != 1 || w.mid.Resumes[0].Step != 2 {
		t.Errorf("running after its resume, a's resumes: %+v; want the one from step 2", w.mid.Resumes)
	}
	if end := byName(res)["a"]; !slices.Equal(end.Resumes, w.mid.Resumes) {
		t.Errorf("a's resumes: %+v at the end, %+v while it ran; want the same record", end.Resumes, w.mid.Resumes)
	}
}

// TestExploitKeepsOwnCurve (issue 34, rule 3): a pbt trial exploited at step 2 keeps its own
// values up to step 2 in its metric_series (they used to be the donor's); the donor's value
// at step 3, which the donor's copy held (it paused past the round's step), is marked as the
// donor's in its lineage (donated) and drawn apart in the report.
func TestExploitKeepsOwnCurve(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 4, objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    early-stop: {method: pbt, interval: 2, max: 4, quantile: 0.25, perturb: [0.8, 1.25], resample: 0}
    parallel-tasks:
`+pastRung, Options{Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	n1 := byName(res)["n=1"]
	acc := n1.MetricSeries["acc"]
	if len(n1.Lineage) != 1 || n1.Lineage[0].Step != 2 || n1.Lineage[0].From != "n=4" {
		t.Fatalf("n=1: lineage %+v; want one exploit from n=4 at step 2\n%s", n1.Lineage, out)
	}
	if len(acc) != 4 || !slices.Equal(acc[:3], []float64{1, 2, 12}) { // its step 4 is its own, or n=4's
		t.Errorf("n=1's acc %v; want its own 1, 2, then n=4's 12 at step 3, then its own step 4", acc)
	}
	// n=4 went on to step 3 once stopped (4 on a slow machine): its copy held it.
	if d := n1.Lineage[0].Donated; len(d) != 2 || d[0] != 3 || d[1] != 3 && d[1] != 4 {
		t.Errorf("n=1's exploit: donated %v; want [3 3]: step 3 is n=4's value", d)
	}
	if len(n1.Resumes) != 1 || n1.Attempts != 2 {
		t.Errorf("n=1: %d attempts, resumes %+v; want its own one resume, not the donor's", n1.Attempts, n1.Resumes)
	}
	html, err := os.ReadFile(filepath.Join(res.LogDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `class="donor"`) || !strings.Contains(string(html), "n=4&#39;s values") && !strings.Contains(string(html), "n=4's values") {
		t.Errorf("the report does not draw n=1's steps from n=4 apart")
	}
}
