// Package sched owns a parallel block's waiting line and its admission loop. Trials come
// from a Source; they wait in line in the source's order and start when fewer than the
// limit run and every Resource has room for them. What an admitted trial does is the
// caller's Run func: the scheduler knows nothing of processes, their output or results.
//
// A trial's way through the scheduler:
//
//	Source.Next ──▶ waiting ──admit (slot, then each Resource)──▶ Source.Start ──▶ Run
//	                  ▲   │ TaskWaiting (why, when it changes)        │ false:    │
//	                  │   │                                           ▼ given back│
//	                  │   └─ halted: skipped               Resources released ◀───┘
//	                  │                                           │
//	                  └──────────── requeued (front of the line) ◀┤
//	                                                              └─▶ Source.Ended (ended, or paused)
//
// A paused trial leaves the scheduler like an ended one (its room is released), and its
// source offers the same *Trial again from Next when it is to resume.
//
// The scheduler's trial carries no resource: each Resource keeps what it holds for a trial
// itself, keyed by the *Trial (a Source by the *Trial or its task, as it needs), so that
// adding a resource touches no type here.
package sched

import (
	"context"

	"github.com/runall/runall/runner/plan"
)

// Trial is one trial on its way through the scheduler: what travels from the source to
// the executor, and nothing else.
type Trial struct {
	Task       *plan.Task
	Attempt    int // how often it was admitted: 2 once it was requeued or resumed
	PassedOver int // how often a trial behind it started while it waited
}

// Source hands the scheduler its trials. The plan's trials in their order are one source,
// a claims queue shared by several runalls another (runner/claimsource); a sampler
// that proposes trials as the sweep runs is a third (runner/searchsource). The scheduler calls a source from its loop and a trial's
// goroutine, never two calls at once for one trial.
type Source interface {
	// Next returns the trials to line up now, in the order they are offered, and whether
	// more may come later. The scheduler asks when its line is empty; want is how many
	// could start at once (free slots, at least 1): a sampler asks that many.
	Next(ctx context.Context, want int) (trials []*Trial, more bool)
	// Ready is closed, or sends, when Next may have trials after returning none; nil when
	// it never will (the scheduler then asks again after a trial ends).
	Ready() <-chan struct{}
	// Start is called on the trial's goroutine once it was admitted, before it runs; false
	// gives it back untouched (another runall holds it): it leaves the line, unrun.
	Start(ctx context.Context, t *Trial) bool
	// Ended is called on the trial's goroutine once it ran for good, or paused (out.End is
	// event.EndPause), not when it goes back to the line (event.EndRequeue). A source may offer a paused trial again from Next.
	Ended(ctx context.Context, t *Trial, out Outcome)
}

// Withdrawer is a source whose trials may be taken from the line before they start: a claims
// queue's trial that another runall of the sweep started or finished while this one had no
// room for it. While trials wait, the scheduler asks it after each Ready.
type Withdrawer interface {
	Source
	// Withdrawn is those of waiting (lined up here, not started) that are no longer this
	// scheduler's to run: they leave the line unrun and untold. The source may offer them
	// again from Next (their runall died, say).
	Withdrawn(ctx context.Context, waiting []*Trial) []*Trial
}

// List is a source of a fixed list of trials: the plan's, in its order.
type List struct {
	trials []*Trial
	given  bool
}

// NewList is a source of tasks, offered in the given order.
func NewList(tasks []*plan.Task) *List {
	l := &List{}
	for _, t := range tasks {
		l.trials = append(l.trials, &Trial{Task: t})
	}
	return l
}

// Next returns every trial, once.
func (l *List) Next(context.Context, int) ([]*Trial, bool) {
	if l.given {
		return nil, false
	}
	l.given = true
	return l.trials, false
}

// Ready is nil: a list has nothing more to give.
func (l *List) Ready() <-chan struct{} { return nil }

// Start runs every trial.
func (l *List) Start(context.Context, *Trial) bool { return true }

// Ended does nothing.
func (l *List) Ended(context.Context, *Trial, Outcome) {}
