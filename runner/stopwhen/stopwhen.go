package stopwhen

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Watch carries config stop-when through a run: once a finished trial's metrics meet the
// condition, the trials not yet started are skipped, and no sampler is asked for more.
type Watch struct {
	cond *plan.Condition
	// top are the file's top-level commands: every other command is a trial or a trial's
	// step, whose metrics count, also one a sampler proposed as the run went (search:).
	top map[*plan.Task]bool

	mu     sync.Mutex
	reason string // why trials are skipped; "" until the condition is met
}

// New watches p's stop-when; with none, it never stops anything.
func New(p *plan.Plan) *Watch {
	s := &Watch{cond: p.Config.StopWhen, top: map[*plan.Task]bool{}}
	for _, t := range p.Tasks {
		s.top[t] = !t.IsBlock()
	}
	return s
}

// Event is stop-when's consumer: a trial's command that ends ok with metrics that meet
// the condition stops new trials from starting.
func (s *Watch) Event(ev event.Event, emit func(event.Event)) {
	if s.cond == nil || ev.Kind != event.TaskEnded || ev.End != event.EndFinal || ev.Status != results.StatusOK || s.top[ev.Task] {
		return
	}
	v, has := ev.Metrics[s.cond.Metric]
	if !has || !s.cond.Met(v) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason != "" {
		return
	}
	s.reason = fmt.Sprintf("stop-when %q was met by %q (%s=%s)", s.cond.Text, ev.Task.Name, s.cond.Metric, strconv.FormatFloat(v, 'g', -1, 64))
	emit(event.Event{Kind: event.RunStatus, Line: s.reason + ": trials not started yet are skipped, running ones finish"})
}

// Gate is where a trial about to start asks whether it should be skipped instead; it says
// why.
func (s *Watch) Gate() (reason string, skip bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason == "" {
		return "", false
	}
	return "not started: " + s.reason, true
}

// Reason is why stop-when skipped trials, "" when it did not.
func (s *Watch) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}
