package rounds

import (
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// roster is a block's trials: by their key, and the trial each step of a trial of steps
// belongs to. It is read only once made, so the run's events are sorted with it on the
// emitting goroutine and the block's own.
type roster struct {
	key    func(*plan.Task) string
	trials map[string]*plan.Task     // by key
	steps  map[*plan.Task]*plan.Task // the trial each step of a trial of steps belongs to
}

func (r roster) has(t *plan.Task) bool { return r.trials[r.key(t)] == t }

// trialOf is the block's trial that command c runs for: c itself, or the trial c is a step
// of; nil when c is none of the block's.
func (r roster) trialOf(c *plan.Task) *plan.Task {
	if t := r.steps[c]; t != nil {
		return t
	}
	if r.has(c) {
		return c
	}
	return nil
}

// ends reports whether command c's end with status ends its trial: the trial's own end, its
// last step's, or a step's that failed (the steps after it do not run).
func (r roster) ends(c *plan.Task, status results.Status) bool {
	t := r.steps[c]
	return t == nil || c == t.Steps[len(t.Steps)-1] || status != results.StatusOK && status != results.StatusIgnored
}

// takes reports whether the block's goroutine is to be told ev: a value of its rule's
// metric, a pause or an end of one of its trials.
func (r roster) takes(ev event.Event, metric string) bool {
	if r.trialOf(ev.Task) == nil { // a trial of steps reports, pauses and ends in its steps
		return false
	}
	switch {
	case ev.Kind == event.TaskMetric && ev.Metric == metric:
		return true
	case ev.Kind == event.TaskEnded && ev.End == event.EndPause:
		return true
	case ev.Kind == event.TaskEnded && ev.End == event.EndFinal && r.ends(ev.Task, ev.Status):
		return true
	}
	return false
}

// noteOf is what the block's goroutine makes of an event it takes.
func (r roster) noteOf(ev event.Event) note {
	t := r.trialOf(ev.Task)
	switch {
	case ev.Kind == event.TaskMetric:
		return note{kind: noteValue, t: t, step: ev.Step, value: ev.Value}
	case ev.End == event.EndPause:
		return note{kind: notePaused, t: t}
	}
	return note{kind: noteEnded, t: t, status: ev.Status}
}
