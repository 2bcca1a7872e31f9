// Package diverge ends a trial whose watched metric went NaN or infinite (diverged-on): a
// consumer of the run's events that stops the trial through the run's Stopper with status
// diverged, at once, so that its GPU is free for the next. Like pruned, diverged does not
// stop the run, is not retried and leaves the exit code 0; a sampler is told fail, and
// early stopping has already counted the value as the worst.
package diverge

import (
	"fmt"
	"math"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Stopper stops a running trial with a status (executor.Running).
type Stopper interface {
	Stop(t *plan.Task, status results.Status, reason string) bool
}

// Watch is the consumer. Its Event runs on the emitting goroutine and only asks the
// Stopper, which signals the trial's processes and returns.
type Watch struct {
	cfg  plan.Faults // the rules of tasks in no block
	auto []string    // the objectives' metrics, which auto watches in every block

	mu      sync.Mutex
	stopper Stopper
	ended   map[*plan.Task]bool
}

// New is the watch of p's trials; nil when every rule is off.
func New(p *plan.Plan) *Watch {
	w := &Watch{cfg: p.ConfigFaults(), ended: map[*plan.Task]bool{}}
	for _, o := range p.Config.Objectives {
		w.auto = append(w.auto, o.Metric)
	}
	on := !w.cfg.DivergedOn.Off
	for _, b := range p.Tasks {
		on = on || b.Faults != nil && !b.Faults.DivergedOn.Off
	}
	if !on {
		return nil
	}
	return w
}

// UseStopper is how the run hands the watch what stops its trials.
func (w *Watch) UseStopper(s Stopper) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopper = s
}

// Event ends a trial as diverged at the first NaN or infinite value of a metric its rule
// watches (a TaskMetric's NaN: the trial printed nan or inf there).
func (w *Watch) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind != event.TaskMetric || ev.Task == nil || !math.IsNaN(ev.Value) && !math.IsInf(ev.Value, 0) || !w.watches(ev.Task, ev.Metric) {
		return
	}
	w.mu.Lock()
	s, done := w.stopper, w.ended[ev.Task]
	w.ended[ev.Task] = true
	w.mu.Unlock()
	if s == nil || done {
		return
	}
	s.Stop(ev.Task, results.StatusDiverged, fmt.Sprintf("diverged: %s was not a number at step %d (diverged-on: %s)",
		ev.Metric, ev.Step, w.rule(ev.Task).DivergedOn))
}

// watches reports whether t's rule watches metric: auto adds the objectives and the
// block's early-stop metric to those whose name holds "loss".
func (w *Watch) watches(t *plan.Task, metric string) bool {
	auto := w.auto
	if t.EarlyStop != nil && t.EarlyStop.Metric != "" {
		auto = append(auto[:len(auto):len(auto)], t.EarlyStop.Metric)
	}
	return w.rule(t).DivergedOn.Watches(metric, auto)
}

// rule is t's block's rules, config's for a task in no block.
func (w *Watch) rule(t *plan.Task) plan.Faults {
	if t.Faults != nil {
		return *t.Faults
	}
	return w.cfg
}
