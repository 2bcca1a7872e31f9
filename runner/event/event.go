// Package event is a run's one lifecycle stream: a task waited (and why), started (where),
// printed a line, reported a metric, its memory or its progress, ended (its End: retried,
// requeued, paused or for good, with its status) or was skipped; a transfer progressed; the run said a status
// line; the run ended. Every concern that reacts to a run (the ledger of results, the
// recorder of the run's end with the report and notify, Prometheus, stop-when, early
// stopping, gpu-sharing: progress, the live server, the outputs) is a Consumer of it,
// added by the runner (runner/stream.go). The Stream is also the run's one status machine
// of tasks (pending, running, ended), and the gate every event passes before a consumer
// sees it (the runner masks secrets there). It knows nothing of the scheduler or executor
// that emit the events, nor of the consumers.
//
// Consumers are called on the emitting goroutine, and do nothing there that could wait.
// Those whose work is cheap and whose order matters take each event there (the ledger
// first, so that every consumer after it reads a task's result with the event applied;
// the recorder; Prometheus, stop-when, gpu-sharing: progress, the live server, which
// only marks its page changed). Those that do I/O or may stall (the output, early
// stopping, the rules that pause) put each event in a Queue, the one inbox type, bounded
// however long their goroutine stalls, and take it there; what they have to say goes to
// their Notes, which the stream tells after the event it delivers: none of them holds the
// emitter.
package event

import (
	"sync"
	"time"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Kind says what happened.
type Kind int

const (
	TaskWaiting  Kind = iota // a trial is ready but not admitted; Reason says why
	TaskStarted              // an attempt began
	TaskOutput               // one line of output; Stream is "stdout" or "stderr"
	TaskEnded                // an attempt ended; End says how (retry, requeue, pause, final)
	TaskSkipped              // the task will not run; Reason says why
	SyncProgress             // an S3 transfer made progress; Line is a human summary
	RunStatus                // periodic: what runs and what waits (Line is a summary)
	RunEnded                 // the run is over; Status is the overall status, Results its results
	TaskMemory               // a GPU trial's memory changed; Memory and Peak set
	TaskMetric               // a runall-metric line gave a value; Metric and Value set
	TaskProgress             // the trial's output said how far it came; Progress set
)

func (k Kind) String() string {
	return [...]string{"waiting", "start", "output", "end", "skipped", "sync", "status", "run-end", "memory", "metric", "progress"}[k]
}

// Event is one thing that happened during a run. Events are emitted by the scheduler, the
// commands and the run (and by consumers in reaction, through emit) and reach every
// consumer in the order emitted; the output takes every one but metric values, through a
// Queue, to the one goroutine that owns the terminal.
//
// Every event has its Kind and Time (the stream stamps one left zero); every Task kind its
// Task (nil on the run's own). What each kind sets besides:
//
//	TaskWaiting   Reason
//	TaskStarted   Attempt, PassedOver; Devices, Need (a GPU trial); Detail (a resumed attempt)
//	TaskOutput    Attempt, Stream, Line
//	TaskEnded     Attempt, End, Status, ExitCode, Duration, Reason, Try (an attempt that ran); by End:
//	                EndRetry    nothing more
//	                EndRequeue  Requeues
//	                EndPause    Detail
//	                EndFinal    Detail, Metrics (both nil when it never ran)
//	TaskSkipped   Reason
//	TaskMemory    Memory, Peak
//	TaskMetric    Attempt, Metric, Value, Step
//	TaskProgress  Progress
//	SyncProgress  Line; Task when it is a trial's upload; Reason when that upload failed (its upload_errors)
//	RunStatus     Line; Task when the line is about a trial
//	RunEnded      Status, Results
//
//limits:flat one value on the stream for every kind of event: the table above says which fields each kind sets, and End is the one field that says how an attempt ended
type Event struct {
	Kind     Kind
	Time     time.Time
	Task     *plan.Task     // nil for run-level events
	Attempt  int            // 1 for the first attempt
	Stream   string         // TaskOutput: "stdout" or "stderr"
	Line     string         // TaskOutput: the line without its newline; RunStatus/SyncProgress: text
	Reason   string         // TaskWaiting, TaskSkipped, TaskEnded, SyncProgress (a trial's upload that failed) (e.g. "timeout after 5m", "out of GPU memory, requeued")
	Status   results.Status // TaskEnded, RunEnded
	ExitCode int            // TaskEnded; -1 when killed by a signal
	Duration time.Duration  // TaskEnded: how long the attempt (the task, when final) ran
	Devices  []string       // TaskStarted: the GPU UUIDs the trial was placed on
	Need     uint64         // TaskStarted: the GPU memory reserved for it, bytes
	// TaskStarted: how often trials behind it started while it waited (first attempt).
	PassedOver int
	Memory     uint64  // TaskMemory: what the trial holds now, bytes (on its fullest device)
	Peak       uint64  // TaskMemory: the most it has held
	Metric     string  // TaskMetric: the metric's name
	Value      float64 // TaskMetric: its value; NaN when the step had none (the trial printed nan or inf)
	Step       int     // TaskMetric: how many values of the metric the task reported, this one included
	// Progress is how far the trial came (TaskProgress), at most one a second per trial.
	Progress *results.Progress

	// End is how the attempt ended (TaskEnded): a retry, a requeue, a pause or the task's
	// final end; EndNone on every other kind.
	End End
	// Try is the attempt's record (TaskEnded, when an attempt ran): its class where it
	// failed (runner/failclass), its exit, signal, start and end, which the ledger lists.
	Try *results.Attempt
	// Requeues is how often the trial went back to the line so far (TaskEnded, EndRequeue).
	Requeues int
	// Metrics is a finished task's last value of each metric (TaskEnded, EndFinal).
	Metrics map[string]float64
	// Detail is what a command learned as it ran, for its result (TaskEnded, EndFinal; nil
	// when it never ran); what it did up to its pause (EndPause); on a resumed attempt's
	// TaskStarted, what it starts from: its restored series and its resumes so far, so that
	// its record while it runs is its own.
	Detail *Detail
	// Results is the run's results (RunEnded), which its consumers (the results file, the
	// report, notify) record.
	Results *results.Run
}

// Detail is what a command's final TaskEnded tells the results besides its status: its
// last lines, the memory it was admitted with and held, the signal that ended it, and its
// metrics, so that the results recorder learns a task's result from its events alone.
//
//limits:flat a record copied field by field into the task's results.Task
type Detail struct {
	StdoutTail, StderrTail []string
	// GPU memory (OnGPU: it had a placement): the need it ran with (learned or raised,
	// settled to its peak), the most it held and how that was measured.
	OnGPU                    bool
	GPUMemory, PeakGPUMemory uint64
	PeakGPUMemorySource      string
	// Host memory (OnHost: it set memory:): the need it was admitted with and the most it
	// held.
	OnHost                     bool
	HostMemory, PeakHostMemory uint64
	Signal                     string // the signal that killed its last attempt ("SIGKILL")
	Metrics                    map[string]float64
	MetricSeries               map[string][]float64
	MetricWarnings             []string
	Resumes                    []results.Resume // the attempts that started from its kept checkpoint

	Lineage  []results.Exploit // pbt: the exploits it went through, as its attempt knew them
	Progress *results.Progress // how far its output said it came, nil when it said nothing
	Try      *results.Attempt  // its last attempt's record, which its final event carries as its Try
}

// Consumer reacts to the events of a run. The stream calls Event on the emitting
// goroutine, one event at a time, in the order they were emitted: a consumer needs no lock
// for state only Event touches, but must never block, since the emitter is a trial (its
// output lines) or the scheduler. One that does I/O (a terminal, a socket, a file, S3, a
// store) does it on a goroutine of its own and takes its events from a Queue, which never
// makes the emitter wait and bounds its memory however long that goroutine stalls; what
// that goroutine has to say it says to its Notes (a Teller), never to the stream. RunEnded,
// the run's last event, is the one exception: nothing is emitted beside it and the run's
// end waits for its consumers anyway, so a consumer may finish its work there. A consumer
// that reacts in Event with an event of its own passes it to emit, never to the stream:
// every consumer gets it after the current one.
type Consumer interface {
	Event(ev Event, emit func(Event))
}

// Func makes a function a Consumer.
type Func func(ev Event, emit func(Event))

// Event calls f.
func (f Func) Event(ev Event, emit func(Event)) { f(ev, emit) }

// Stream is a run's one lifecycle stream: what is emitted reaches every consumer once, in
// the order consumers were added, before Emit returns (a consumer with a Queue has it
// queued by then), followed by what the consumers emitted in reaction and what the
// Tellers said meanwhile. It is safe for concurrent use.
type Stream struct {
	mu        sync.Mutex
	consumers []Consumer
	gate      func(*Event) // every event passes it before any consumer sees it
	states    map[*plan.Task]state
	reacted   []Event  // emitted by consumers while an event is delivered
	notes     []*Notes // the Tellers' lines, told after each event delivered
	over      bool     // RunEnded was delivered: nothing more is told
}

// state is a task's place in its lifecycle, as far as the stream keeps it: enough to drop
// a transition that can no longer happen (a skip of a task that already ran, say). It is
// the one status machine of a run; consumers trust the events they get.
type state uint8

const (
	pending state = iota // not started, requeued, or paused
	running
	ended // for good
)

// Add makes c a consumer of the events emitted after; a run adds its consumers before its
// first task starts. A Teller's lines are told after each event delivered from now on.
func (s *Stream) Add(c Consumer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.consumers = append(s.consumers, c)
	if t, ok := c.(Teller); ok {
		n := t.Notes()
		s.notes = append(s.notes, n)
		n.wakeWith(s.tell)
	}
}

// tell delivers the lines the Tellers said since the last event, as RunStatus events: a
// line said between events is told now, not with the next event, which may be long in
// coming (every trial waiting on a GPU held). Nothing after the run's last event.
func (s *Stream) tell() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return
	}
	s.takeNotes()
	s.drain()
}

// Gate has every event emitted from now on, a consumer's reaction too, pass f before any
// consumer sees it: the run masks secrets in its texts there (runner/mask_gate.go), so that
// no consumer can show one.
func (s *Stream) Gate(f func(*Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = f
}

// Emit sends ev to every consumer, stamped with the time when it has none. It reports
// whether it was sent: a TaskSkipped for a task that started, a final TaskEnded for one
// that already ended for good, or a TaskEnded that says no End, is not, so that each task
// ends exactly once.
func (s *Stream) Emit(ev Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.transition(&ev) {
		return false
	}
	s.deliver(ev)
	s.drain()
	return true
}

// drain delivers what consumers emitted, and the Tellers said, while events were delivered.
func (s *Stream) drain() {
	for len(s.reacted) > 0 {
		next := s.reacted[0]
		s.reacted = s.reacted[1:]
		if s.transition(&next) {
			s.deliver(next)
		}
	}
}

// deliver hands ev to every consumer, then queues the lines the Tellers said meanwhile (on
// their goroutines, or as they took ev), to be delivered next: the one flush of what
// consumers have to say.
func (s *Stream) deliver(ev Event) {
	for _, c := range s.consumers {
		c.Event(ev, s.react)
	}
	if ev.Kind == RunEnded {
		s.over = true
	}
	s.takeNotes()
}

// takeNotes queues the lines the Tellers hold, to be delivered next.
func (s *Stream) takeNotes() {
	for _, n := range s.notes {
		for _, l := range n.take() {
			s.reacted = append(s.reacted, Event{Kind: RunStatus, Line: l})
		}
	}
}

// react queues what a consumer emits; s.mu is held by the delivering goroutine.
func (s *Stream) react(ev Event) { s.reacted = append(s.reacted, ev) }

// transition stamps ev and moves its task along its lifecycle; false when ev cannot happen
// to the task now.
func (s *Stream) transition(ev *Event) bool {
	if s.gate != nil {
		s.gate(ev)
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if ev.Task == nil {
		return true
	}
	if s.states == nil {
		s.states = map[*plan.Task]state{}
	}
	now := s.states[ev.Task]
	switch {
	case ev.Kind == TaskSkipped:
		if now != pending {
			return false
		}
		s.states[ev.Task] = ended
	case ev.Kind == TaskStarted:
		s.states[ev.Task] = running
	case ev.Kind == TaskEnded && ev.End == EndNone:
		return false // a TaskEnded must say how the attempt ended (End)
	case ev.Kind == TaskEnded && ev.End == EndFinal:
		if now == ended {
			return false
		}
		s.states[ev.Task] = ended
	case ev.Kind == TaskEnded && ev.End.Pending():
		s.states[ev.Task] = pending
	}
	return true
}
