package sched

import "slices"

// Line is a parallel block's waiting line: its trials in the order they are offered to
// admission, each trial counting how often one behind it started while it waited. A trial
// passed over the bound's number of times holds the line: nothing behind it starts until it
// has. So no trial waits forever, and the bound is exact. The scheduler admits from it, and
// runner/simulate predicts a run with it. It is not safe for concurrent use: the block's
// loop owns it.
type Line[T comparable] struct {
	bound   int
	waiting []waiting[T]
}

type waiting[T comparable] struct {
	v        T
	passedBy int // how often a trial behind it started while it waited
}

// NewLine is a line of vs, already ranked, where a trial passed over bound times holds
// the line.
func NewLine[T comparable](vs []T, bound int) *Line[T] {
	q := &Line[T]{bound: max(bound, 0)}
	for _, v := range vs {
		q.waiting = append(q.waiting, waiting[T]{v: v})
	}
	return q
}

// Len is how many trials wait.
func (q *Line[T]) Len() int { return len(q.waiting) }

// Front puts v at the head of the line: a trial requeued after running out of memory
// goes before the ones that never started.
func (q *Line[T]) Front(v T) {
	q.waiting = slices.Insert(q.waiting, 0, waiting[T]{v: v})
}

// Push puts v at the end of the line: a trial its source handed out after the line
// began.
func (q *Line[T]) Push(v T) {
	q.waiting = append(q.waiting, waiting[T]{v: v})
}

// All is the waiting trials in order, for a look that changes nothing.
func (q *Line[T]) All() []T {
	out := make([]T, 0, len(q.waiting))
	for _, w := range q.waiting {
		out = append(out, w.v)
	}
	return out
}

// Drain removes every waiting trial and returns them in order.
func (q *Line[T]) Drain() []T {
	out := q.All()
	q.waiting = nil
	return out
}

// Remove takes v out of the line, unstarted: its source took it back.
func (q *Line[T]) Remove(v T) {
	q.waiting = slices.DeleteFunc(q.waiting, func(w waiting[T]) bool { return w.v == v })
}

// Tried is what a try did with one waiting trial.
type Tried int

const (
	Started Tried = iota // it started: it leaves the queue
	Waits                // it does not fit now: later ones may pass it
	Dropped              // it can never run: it leaves the queue without starting
	Full                 // nothing more may start now (max-parallel-commands): stop the walk
)

// Admit walks the waiting trials in order and calls try on each. A trial that starts
// passes every one still waiting ahead of it; one passed over bound times holds the line:
// the walk stops at it until it starts, so that no trial waits forever.
func (q *Line[T]) Admit(try func(T) Tried) {
	for i := 0; i < len(q.waiting); {
		w := q.waiting[i]
		switch try(w.v) {
		case Full:
			return
		case Dropped:
			q.waiting = slices.Delete(q.waiting, i, i+1)
		case Started:
			held := false
			for j := range q.waiting[:i] {
				q.waiting[j].passedBy++
				held = held || q.waiting[j].passedBy >= q.bound
			}
			q.waiting = slices.Delete(q.waiting, i, i+1)
			if held {
				return // one ahead has now been passed over enough: it holds the line
			}
		case Waits:
			if w.passedBy >= q.bound {
				return
			}
			i++
		}
	}
}

// PassedBy is how often v was passed over while it waited; -1 when it does not wait.
func (q *Line[T]) PassedBy(v T) int {
	for _, w := range q.waiting {
		if w.v == v {
			return w.passedBy
		}
	}
	return -1
}
