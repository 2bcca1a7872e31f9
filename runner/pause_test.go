package runner

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// halver pauses trial a at step 2, as a rule that pauses at a rung would, and resumes it
// once trial b has ended; it keeps each task's transitions.
type halver struct {
	p        Pauser
	at       int
	resumeOn string // resume a once this trial ends; "" never: end it as pruned once paused
	endOn    string // end a as pruned once this trial ends, instead
	mu       sync.Mutex
	asked    bool
	a        *plan.Task
	seen     []string // "task:transition", in order
}

func (h *halver) UsePauser(p Pauser) { h.p = p }

func (h *halver) Event(ev event.Event, _ func(event.Event)) {
	if ev.Task == nil || ev.Kind == event.TaskOutput {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case ev.Kind == event.TaskMetric && ev.Task.Name == "a" && ev.Step == h.at && !h.asked:
		h.asked, h.a = true, ev.Task
		if !h.p.PauseAt(ev.Task, h.at, "rung 2", results.StatusPruned) {
			h.seen = append(h.seen, "a:not paused")
		}
	case ev.Kind == event.TaskEnded && ev.End == event.EndPause:
		h.seen = append(h.seen, ev.Task.Name+":paused")
		if h.resumeOn == "" && h.endOn == "" {
			go h.p.End(ev.Task, results.StatusPruned, "not in the top 1/2 of rung 2")
		}
	case ev.Kind == event.TaskEnded && ev.End == event.EndFinal:
		h.seen = append(h.seen, ev.Task.Name+":"+string(ev.Status))
		if ev.Task.Name == h.resumeOn {
			go h.p.Resume(h.a) // not from the stream's goroutine: Resume is a call into the run
		}
		if ev.Task.Name == h.endOn {
			go h.p.End(h.a, results.StatusPruned, "not in the top 1/2 of rung 2")
		}
	case ev.Kind == event.TaskStarted:
		h.seen = append(h.seen, ev.Task.Name+":start")
	}
}

// checkpointing is a trial that saves its step to ck/<name> after each of 5 steps, says so,
// and resumes from it.
const checkpointing = `mkdir -p ck/<n>; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat ck/<n>/step); echo "resumed at $i, told $RUNALL_RESUME_STEP"; fi
          while [ $i -lt 5 ]; do i=$((i+1)); echo runall-metric loss=$i; echo $i > ck/<n>/step.tmp; mv ck/<n>/step.tmp ck/<n>/step; echo runall-checkpoint step=$i; sleep 0.3; done`

// TestPauseAndResume (issue 27, point 1 and the pause path): a consumer pauses a running
// trial once its checkpoint for step 2 has landed; the trial ends its turn paused, its room
// goes to the next trial at once (one slot: b runs while a is paused), and once resumed it
// restores its checkpoint and goes on at step 3, its series whole and its resume recorded.
func TestPauseAndResume(t *testing.T) {
	h := &halver{at: 2, resumeOn: "b"}
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
`, Options{Consumers: []event.Consumer{h}, Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	want := []string{"a:start", "a:paused", "b:start", "b:ok", "a:start", "a:ok"}
	if !slices.Equal(h.seen, want) {
		t.Errorf("transitions %q, want %q", h.seen, want)
	}
	a := byName(res)["a"]
	if got := a.MetricSeries["loss"]; !slices.Equal(got, []float64{1, 2, 3, 4, 5}) {
		t.Errorf("a's loss %v, want 1..5 across its pause", got)
	}
	if len(a.Resumes) != 1 || a.Resumes[0].Step < 2 || a.Attempts != 2 {
		t.Errorf("a: resumes %+v after %d attempts, want one from step 2 or later", a.Resumes, a.Attempts)
	}
	for _, line := range []string{"[a] paused in", "resumed from step 2", "told 2", "Summary: 2 ok"} {
		if !strings.Contains(out, line) {
			t.Errorf("the output does not say %q\n%s", line, out)
		}
	}
}

// TestPauseWithoutCheckpoint (issue 27, point 5): a trial whose checkpoint has not changed
// since step 1 when a pause needs step 3 is told so in its output and the summary after the
// checkpoint's bounded wait, and is stopped as the rule says (pruned), not hung.
func TestPauseWithoutCheckpoint(t *testing.T) {
	h := &halver{at: 3, resumeOn: "never"}
	res, out, err := runFile(t, `
tasks:
  - name: sweep
    parallel-tasks:
      - name: a
        cmd: mkdir -p ck; echo 1 > ck/step; for i in 1 2 3 4 5 6 7 8 9; do echo runall-metric loss=$i; sleep 0.3; done
        checkpoint: {dir: ck, every: 50ms, wait: 500ms}
`, Options{Consumers: []event.Consumer{h}, Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	a := byName(res)["a"]
	why := "checkpoint ck has not changed since step 1, and pausing needs step 3 (waited 500ms)"
	if a.Status != results.StatusPruned || !strings.Contains(a.Reason, why) {
		t.Errorf("a: %s (%s), want pruned: %s", a.Status, a.Reason, why)
	}
	if strings.Count(out, why) < 2 { // the trial's own line, and the summary's reason
		t.Errorf("the output says %q fewer than twice\n%s", why, out)
	}
}

// TestEndAsItPauses: a rule that ends a trial as soon as it says it paused (before the trial
// is back in its source) ends it: the run does not wait for it for ever.
func TestEndAsItPauses(t *testing.T) {
	for range 3 {
		h := &halver{at: 2}
		res, out, err := runFile(t, `
tasks:
  - name: sweep
    parallel-tasks:
      - name: <n>
        matrix: {n: [a]}
        cmd: |
          `+checkpointing+`
        checkpoint: ck/<n>
`, Options{Consumers: []event.Consumer{h}, Grace: 5 * time.Second})
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
		if a := byName(res)["a"]; a.Status != results.StatusPruned || !strings.Contains(a.Reason, "not in the top 1/2") {
			t.Errorf("a: %s (%s), want pruned while paused", a.Status, a.Reason)
		}
	}
}

// TestEndLastPausedEndsRun: a paused trial ended once every other trial has ended (the last
// decision of a rung whose best trials ran to their end) ends the run: the scheduler, which
// waits for the paused trial to come back, is told that it will not.
func TestEndLastPausedEndsRun(t *testing.T) {
	h := &halver{at: 2, endOn: "b"}
	type ran struct {
		res *results.Run
		out string
		err error
	}
	done := make(chan ran, 1)
	go func() {
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
`, Options{Consumers: []event.Consumer{h}, Grace: 5 * time.Second})
		done <- ran{res, out, err}
	}()
	var r ran
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute): // a hang, not a slow run: the run takes seconds
		t.Fatalf("the run did not end after its last paused trial was ended; transitions %q", h.transitions())
	}
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.out)
	}
	if a := byName(r.res)["a"]; a.Status != results.StatusPruned {
		t.Errorf("a: %s (%s), want pruned while paused", a.Status, a.Reason)
	}
}

func (h *halver) transitions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// TestSHAPausesTrialsOfSteps: sha pauses a trial that is a sequence of steps in the step
// that reports its metric, and resumes it there: the steps before it do not run again, and
// what they exported is there again for the resumed step. The other trial is pruned at the
// rung. (The rule used to see only trials of one command, and let these run to their ends.)
func TestSHAPausesTrialsOfSteps(t *testing.T) {
	res, out, err := runFile(t, `
config: {max-parallel-commands: 2}
tasks:
  - name: sweep
    early-stop: {method: sha, grace: 2, reduction: 2, max: 4, metric: loss, mode: min}
    parallel-tasks:
      - name: t<n>
        matrix: {n: [1, 2]}
        checkpoint: ck/<n>
        tasks:
          - name: prep <n>
            cmd: echo prep ran; export TOKEN=x<n>
          - name: train <n>
            cmd: |
              mkdir -p ck/<n>; i=0; if [ -n "$RUNALL_RESUMED" ]; then i=$(cat ck/<n>/step); fi
              echo "from $i with token $TOKEN"
              while [ $i -lt 4 ]; do i=$((i+1)); echo runall-metric loss=$((i*<n>)); echo $i > ck/<n>/step.tmp; mv ck/<n>/step.tmp ck/<n>/step; echo runall-checkpoint step=$i; sleep 0.3; done
`, Options{Grace: 5 * time.Second})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	got := byName(res)
	if got["train 1"].Status != results.StatusOK || got["train 2"].Status != results.StatusPruned ||
		got["train 1"].Attempts != 2 || got["prep 1"].Attempts != 1 {
		t.Errorf("train 1 %s after %d attempts (prep 1: %d), train 2 %s; want train 1 ok after a pause and a resume, prep 1 run once, train 2 pruned\n%s",
			got["train 1"].Status, got["train 1"].Attempts, got["prep 1"].Attempts, got["train 2"].Status, out)
	}
	if !strings.Contains(out, "[t1 / train 1] from 2 with token x1") || strings.Count(out, "[t1 / prep 1] prep ran") != 1 {
		t.Errorf("train 1 did not resume at step 2 with prep 1's export, prep 1 run once\n%s", out)
	}
}
