package event

import (
	"sync"

	"github.com/runall/runall/runner/plan"
)

// Queue carries events from the emitters to a goroutine of a consumer's own (the terminal's,
// say), and never makes an emitter wait: a consumer that does I/O takes its events from a
// Queue, so that a stdout nobody reads stalls that consumer alone, never a trial.
//
// Its memory is bounded however long its reader stalls. Once it holds Limits' worth of
// output lines, further lines are dropped and counted (Take says how many, so that the
// reader can say so once it can write again); a task's waiting reason, memory reading or
// progress replaces the one it already holds, as only the newest counts. The events a task's
// lifecycle cannot do without (started, ended, skipped, the run's status lines and end)
// are always kept: there are as many as the run has attempts.
type Queue struct {
	limits QueueLimits
	ready  chan struct{} // holds a token while events or the close are waiting to be taken

	mu      sync.Mutex
	events  []Event
	spare   []Event           // the slice the last Take returned, reused by the next
	lines   int               // TaskOutput events queued
	bytes   int               // and the bytes of their lines
	latest  map[latestKey]int // while full: where each task's newest waiting, memory or progress event is
	skipped int               // lines dropped since the last Take
	closed  bool
}

// QueueLimits bound what a Queue holds of output lines; zero picks the default of each.
type QueueLimits struct {
	Lines int // output lines held (4096)
	Bytes int // their bytes (4 MiB)
}

// The default limits hold far more than a reader that keeps up ever lets pile up (bashful's
// 80,000-line stress file reaches a file whole), in about 5 MB.
const (
	defaultQueueLines = 4096
	defaultQueueBytes = 4 << 20
)

// latestKey is a task's event of a kind whose newest value alone counts.
type latestKey struct {
	task *plan.Task
	kind Kind
}

// NewQueue returns an empty queue.
func NewQueue(l QueueLimits) *Queue {
	if l.Lines <= 0 {
		l.Lines = defaultQueueLines
	}
	if l.Bytes <= 0 {
		l.Bytes = defaultQueueBytes
	}
	return &Queue{limits: l, ready: make(chan struct{}, 1)}
}

// Event queues ev; it never blocks. Events after Close are dropped.
func (q *Queue) Event(ev Event, _ func(Event)) {
	q.mu.Lock()
	queued := q.put(ev)
	q.mu.Unlock()
	if queued {
		q.wake()
	}
}

// put queues ev, or drops it when the queue is full and ev is one it can do without.
func (q *Queue) put(ev Event) bool {
	if q.closed {
		return false
	}
	full := q.lines >= q.limits.Lines || q.bytes >= q.limits.Bytes
	switch {
	case ev.Kind == TaskOutput && full:
		q.skipped++
		return false
	case ev.Kind == TaskOutput:
		q.lines++
		q.bytes += len(ev.Line)
	case (ev.Kind == TaskWaiting || ev.Kind == TaskMemory || ev.Kind == TaskProgress) && ev.Task != nil && full:
		k := latestKey{ev.Task, ev.Kind}
		if i, ok := q.latest[k]; ok {
			q.events[i] = ev
			return false
		}
		if q.latest == nil {
			q.latest = map[latestKey]int{}
		}
		q.latest[k] = len(q.events)
	case ev.Task != nil && len(q.latest) > 0:
		// A newer reason or reading must not move before this event of its task.
		delete(q.latest, latestKey{ev.Task, TaskWaiting})
		delete(q.latest, latestKey{ev.Task, TaskMemory})
		delete(q.latest, latestKey{ev.Task, TaskProgress})
	}
	q.events = append(q.events, ev)
	return true
}

func (q *Queue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Ready is told when there are events to take, or the queue was closed.
func (q *Queue) Ready() <-chan struct{} { return q.ready }

// Take returns the events queued so far, in the order they were emitted, and how many
// output lines were dropped since the last Take because the queue was full. The slice is
// valid until the next Take. last is true once the queue is closed: nothing follows evs.
func (q *Queue) Take() (evs []Event, skipped int, last bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	evs, skipped = q.events, q.skipped
	clear(q.spare) // let the lines of the batch before go
	q.events, q.spare = q.spare[:0], evs
	if cap(q.events) > q.limits.Lines { // a burst's slice: give its memory back
		q.events = nil
	}
	q.lines, q.bytes, q.skipped = 0, 0, 0
	clear(q.latest)
	return evs, skipped, q.closed
}

// Close ends the queue: what it holds can still be taken, and nothing more is queued.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}
