package runner

import (
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/queue"
	"github.com/runall/runall/runner/results"
)

// trialQueue is a block's trials that wait to start, in the order they are offered to
// admission, and how many run.
type trialQueue struct {
	line       *queue.Queue[*plan.Task]
	running    int
	limit      int // max-parallel-commands
	lastReason map[*plan.Task]string
}

// newTrialQueue lines up a block's trials, already in its order. A trial may be passed over
// by ones behind it that fit where it does not at most max-parallel-commands times; then it
// holds the line until it fits, so that large trials are not starved.
func (r *run) newTrialQueue(ordered []*plan.Task) *trialQueue {
	limit := max(r.plan.Config.MaxParallel, 1)
	return &trialQueue{line: queue.New(ordered, limit), limit: limit, lastReason: map[*plan.Task]string{}}
}

// admitFrom starts what fits, in the line's order.
func (r *run) admitFrom(q *trialQueue, start func(*plan.Task, *admit.Placement)) {
	q.line.Admit(func(t *plan.Task) queue.Outcome {
		if q.running >= q.limit {
			return queue.Full
		}
		var p *admit.Placement
		if t.GPU != nil && r.admit != nil {
			var reason string
			var err error
			p, reason, err = r.admit.Place(admit.RequestFor(t))
			if err != nil {
				r.failUnrunnable(t, err.Error())
				return queue.Dropped
			}
			if p == nil {
				if reason != q.lastReason[t] {
					r.emit(event.Event{Kind: event.TaskWaiting, Task: t, Reason: reason})
					q.lastReason[t] = reason
				}
				return queue.Waits
			}
		}
		delete(q.lastReason, t)
		r.notePassedOver(t, q.line.PassedBy(t))
		q.running++
		start(t, p)
		return queue.Started
	})
}

// notePassedOver records in a trial's result how often it was passed over before it
// started (on its first step, for a trial of steps).
func (r *run) notePassedOver(t *plan.Task, n int) {
	if n <= 0 {
		return
	}
	if len(t.Steps) > 0 {
		t = t.Steps[0]
	}
	r.ledger.update(t, func(res *results.Task) { res.PassedOver = max(res.PassedOver, n) })
}
