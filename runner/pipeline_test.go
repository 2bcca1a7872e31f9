package runner

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/results"
)

// statusCounter is a consumer added from outside the scheduler and the executor: it keeps
// each task's transitions, as a new concern would.
type statusCounter struct {
	mu    sync.Mutex
	seen  map[string][]string // task name → its transitions, in order
	final map[string]results.Status
}

func (c *statusCounter) Event(ev event.Event, _ func(event.Event)) {
	if ev.Task == nil || ev.Kind == event.TaskOutput || ev.Kind == event.TaskMetric {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	step := ev.Kind.String()
	switch {
	case ev.Kind == event.TaskEnded && ev.End == event.EndFinal:
		step = "final:" + string(ev.Status)
		c.final[ev.Task.Name] = ev.Status
	case ev.Kind == event.TaskSkipped:
		c.final[ev.Task.Name] = results.StatusSkipped
	}
	c.seen[ev.Task.Name] = append(c.seen[ev.Task.Name], step)
}

// TestConsumerSeesEveryTransition adds a consumer through Options alone: it sees every
// task start, each attempt end, and exactly one final status, the one the results record.
func TestConsumerSeesEveryTransition(t *testing.T) {
	c := &statusCounter{seen: map[string][]string{}, final: map[string]results.Status{}}
	res, out, err := runFile(t, `
config: {max-parallel-commands: 2}
tasks:
  - name: setup
    cmd: "true"
  - name: block
    parallel-tasks:
      - name: ok<replace>
        cmd: "true"
        for-each: [1, 2, 3]
      - name: flaky
        cmd: exit 3
        retries: 1
        ignore-failure: true
      - name: steps
        stop-on-failure: false
        tasks:
          - {name: one, cmd: exit 1}
          - {name: two, cmd: "true"}
  - name: after
    cmd: "true"
`, Options{Consumers: []event.Consumer{c}})
	if err == nil {
		t.Fatalf("the run succeeded, want step one failed\n%s", out)
	}
	if len(res.Tasks) != 8 {
		t.Fatalf("%d results, want 8", len(res.Tasks))
	}
	for _, r := range res.Tasks {
		finals := 0
		for _, s := range c.seen[r.Name] {
			if strings.HasPrefix(s, "final:") || s == "skipped" {
				finals++
			}
		}
		if finals != 1 || c.final[r.Name] != r.Status {
			t.Errorf("%s: transitions %q, want one end with %s", r.Name, c.seen[r.Name], r.Status)
		}
	}
	if got, want := c.seen["flaky"], []string{"start", "end", "start", "final:ignored"}; !slices.Equal(got, want) {
		t.Errorf("flaky: %q, want %q", got, want)
	}
	if got, want := c.seen["after"], []string{"start", "final:ok"}; !slices.Equal(got, want) {
		t.Errorf("after: %q, want %q", got, want)
	}
	if got, want := c.seen["two"], []string{"skipped"}; !slices.Equal(got, want) {
		t.Errorf("two: %q, want %q", got, want)
	}
}

// pruner stops a trial whose loss is too high, as early stopping would: through the stop
// seam, with a status of its own.
type pruner struct{ stop executor.Stopper }

func (p *pruner) UseStopper(s executor.Stopper) { p.stop = s }

func (p *pruner) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind == event.TaskMetric && ev.Metric == "loss" && ev.Value > 5 {
		p.stop.Stop(ev.Task, "pruned", "loss too high")
	}
}

// TestConsumerStopsTrial: a consumer stops a running trial from its streamed metric. It
// ends with the consumer's status at its first attempt (no retry), the run does not count
// it as failed, and the other trials run on.
func TestConsumerStopsTrial(t *testing.T) {
	res, out, err := runFile(t, `
tasks:
  - name: sweep
    parallel-tasks:
      - name: bad
        cmd: trap '' TERM; echo runall-metric loss=9; sleep 30
        retries: 2
      - name: good
        cmd: echo runall-metric loss=1
`, Options{Consumers: []event.Consumer{&pruner{}}, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("run: %v, want success\n%s", err, out)
	}
	got := byName(res)
	if b := got["bad"]; b.Status != "pruned" || b.Attempts != 1 || !strings.Contains(b.Reason, "loss too high") {
		t.Errorf("bad: %s after %d attempt(s) (%s), want pruned at its first", b.Status, b.Attempts, b.Reason)
	}
	if g := got["good"]; g.Status != results.StatusOK {
		t.Errorf("good: %s, want ok", g.Status)
	}
}
