package event

import (
	"sync"

	"github.com/runall/runall/runner/plan"
)

// Queue is a consumer's inbox: it carries events from the emitters to a goroutine of the
// consumer's own, and never makes an emitter wait. Every consumer that works off the
// emitting path takes its events from one: the output (the terminal's goroutine), early
// stopping (runner/prune: a goroutine per block) and the rules that pause
// (runner/rounds: a goroutine per block). A stdout nobody reads, or a rule whose store is
// slow, stalls that consumer alone, never a trial.
//
// Its memory is bounded however long its reader stalls. Once it holds Limits' worth of
// output lines (or bytes) or metric values, it is full: further lines are dropped and
// counted; a task's metric value replaces the newest one of the same task and metric it
// already holds (coalesced per trial and metric: the newer step wins, and is counted); a
// task's waiting reason, memory reading or progress replaces the one it already holds, as
// only the newest counts. Take says how many it dropped or coalesced, so that the reader
// can say so. The events a task's lifecycle cannot do without (started, ended, skipped, the
// run's status lines and end) are always kept, in the order they came: there are as many as
// the run has attempts. So a full queue holds at most its limits, the lifecycle's events,
// and one event of each task and kind (and metric) that coalesces since that task's last
// lifecycle event: nothing moves before an earlier event of its own task.
type Queue struct {
	limits QueueLimits
	ready  chan struct{} // holds a token while events or the close are waiting to be taken

	mu      sync.Mutex
	events  []Event
	spare   []Event           // the slice the last Take returned, reused by the next
	lines   int               // TaskOutput events queued
	bytes   int               // and the bytes of their lines
	metrics int               // TaskMetric events queued
	latest  map[latestKey]int // while full: where each task's newest waiting, memory, progress or metric event is
	skipped int               // lines dropped and metric values coalesced since the last Take
	closed  bool
}

// QueueLimits bound what a Queue holds of output lines and metric values; zero picks the
// default of each.
type QueueLimits struct {
	Lines   int // output lines held (4096)
	Bytes   int // their bytes (4 MiB)
	Metrics int // metric values held before they coalesce (4096)
}

// The default limits hold far more than a reader that keeps up ever lets pile up (bashful's
// 80,000-line stress file reaches a file whole), in about 5 MB.
const (
	defaultQueueLines   = 4096
	defaultQueueBytes   = 4 << 20
	defaultQueueMetrics = 4096
)

// latestKey is a task's event of a kind whose newest value alone counts once the queue is
// full (metric: the metric's name, for TaskMetric).
type latestKey struct {
	task   *plan.Task
	kind   Kind
	metric string
}

// NewQueue returns an empty queue.
func NewQueue(l QueueLimits) *Queue {
	if l.Lines <= 0 {
		l.Lines = defaultQueueLines
	}
	if l.Bytes <= 0 {
		l.Bytes = defaultQueueBytes
	}
	if l.Metrics <= 0 {
		l.Metrics = defaultQueueMetrics
	}
	return &Queue{limits: l, ready: make(chan struct{}, 1)}
}

// Event queues ev, as Put does: a Queue is a Consumer of its own.
func (q *Queue) Event(ev Event, _ func(Event)) { q.Put(ev) }

// Put queues ev; it never blocks. It reports whether the queue took ev (queued, or
// coalesced into an event it holds, or a line dropped and counted): false after Close,
// when events are dropped.
func (q *Queue) Put(ev Event) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	queued := q.put(ev)
	q.mu.Unlock()
	if queued {
		q.wake()
	}
	return true
}

// put queues ev, or drops it or coalesces it when the queue is full and ev is one it can do
// without; true when ev was appended.
func (q *Queue) put(ev Event) bool {
	full := q.lines >= q.limits.Lines || q.bytes >= q.limits.Bytes || q.metrics >= q.limits.Metrics
	switch {
	case ev.Kind == TaskOutput && full:
		q.skipped++
		return false
	case ev.Kind == TaskOutput:
		q.lines++
		q.bytes += len(ev.Line)
	case coalesces(ev.Kind) && ev.Task != nil && full:
		k := latestKey{ev.Task, ev.Kind, ev.Metric}
		if i, ok := q.latest[k]; ok {
			q.events[i] = ev
			if ev.Kind == TaskMetric {
				q.skipped++
			}
			return false
		}
		if q.latest == nil {
			q.latest = map[latestKey]int{}
		}
		q.latest[k] = len(q.events)
	case ev.Task != nil && len(q.latest) > 0:
		// A newer reason, reading or value must not move before this event of its task.
		for k := range q.latest {
			if k.task == ev.Task {
				delete(q.latest, k)
			}
		}
	}
	if ev.Kind == TaskMetric {
		q.metrics++
	}
	q.events = append(q.events, ev)
	return true
}

// coalesces reports whether a task's event of kind k may replace the one it holds of the
// same kind once the queue is full: only the newest counts (or, for a metric, it is the one
// a slow reader can still use).
func coalesces(k Kind) bool {
	return k == TaskWaiting || k == TaskMemory || k == TaskProgress || k == TaskMetric
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
// output lines were dropped and metric values coalesced since the last Take because the
// queue was full. The slice is valid until the next Take. last is true once the queue is
// closed: nothing follows evs.
func (q *Queue) Take() (evs []Event, skipped int, last bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	evs, skipped = q.events, q.skipped
	clear(q.spare) // let the lines of the batch before go
	q.events, q.spare = q.spare[:0], evs
	if cap(q.events) > q.limits.Lines { // a burst's slice: give its memory back
		q.events = nil
	}
	q.lines, q.bytes, q.metrics, q.skipped = 0, 0, 0, 0
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

// Len is how many events wait to be taken.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.events)
}
