package trial

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// record is the launcher's own record of what it ran, from the events its commands told:
// each task's attempts, when it first started, whether it ended ok, and the series and
// resumes its last pause or end carried. The run's results stay the ledger's, the record
// every view draws from; this one answers only what the launcher asks of its own work (a
// resumed trial's attempts go on counting, its steps that ended ok do not run again).
type record struct {
	mu   sync.Mutex
	byID map[int]*ran // by task ID, as the results key tasks
}

// ran is what one task ran.
type ran struct {
	attempts int
	started  time.Time
	ok       bool // ended for good, ok or ignored
	resumes  []results.Resume
	series   map[string][]float64
	// ranOut is the number of exploits +1 of the attempt whose script ran to its end (exit 0,
	// unasked) as a pause was awaited: it paused there, at its round, with nothing left to
	// run. 0: none did.
	ranOut int
}

func (r *record) of(t *plan.Task) *ran {
	if r.byID == nil {
		r.byID = map[int]*ran{}
	}
	if r.byID[t.ID] == nil {
		r.byID[t.ID] = &ran{}
	}
	return r.byID[t.ID]
}

// saw keeps what an event the launcher tells says of its task.
func (r *record) saw(ev event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.of(ev.Task)
	switch {
	case ev.Kind == event.TaskStarted:
		t.attempts = ev.Attempt
		if t.started.IsZero() {
			t.started = ev.Time
		}
		if ev.Detail != nil { // resumed: its starts from a kept checkpoint, this one's included
			t.resumes = ev.Detail.Resumes
		}
	case ev.Kind == event.TaskEnded && (ev.End == event.EndPause || ev.End == event.EndFinal):
		t.ok = ev.End == event.EndFinal && (ev.Status == results.StatusOK || ev.Status == results.StatusIgnored)
		if ev.Detail != nil {
			t.series, t.resumes = ev.Detail.MetricSeries, ev.Detail.Resumes
		}
	}
}

// attempts is how often t was started so far (across requeues).
func (r *record) attempts(t *plan.Task) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.of(t).attempts
}

// startedAt is when t's first attempt started (zero before).
func (r *record) startedAt(t *plan.Task) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.of(t).started
}

// endedOK reports whether t ended for good and counted as a success (ok, or ignored).
func (r *record) endedOK(t *plan.Task) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.of(t).ok
}

// resumesOf is t's starts from a kept checkpoint as told so far.
func (r *record) resumesOf(t *plan.Task) []results.Resume {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.of(t).resumes)
}

// seriesOf is t's metric series as its last pause or end told it.
func (r *record) seriesOf(t *plan.Task) map[string][]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.of(t).series)
}

// ranToEnd records that t's attempt, run with exploits exploits so far (pbt), ended on its
// own as it paused: its script ran to its last step.
func (r *record) ranToEnd(t *plan.Task, exploits int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.of(t).ranOut = exploits + 1
}

// ranOut reports whether t's script ran to its end at its last pause, and nothing changed
// since: no exploit (pbt) gave it another checkpoint to go on from (exploits so far).
func (r *record) ranOut(t *plan.Task, exploits int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.of(t).ranOut == exploits+1
}

// told is how a command tells the run what happens: through its Life, kept in the
// launcher's record as it goes.
type told struct {
	life Life
	rec  *record
}

// emit tells the stream ev, stamped now, and keeps it in the record.
func (t told) emit(ev event.Event) { tell(t.life, t.rec, ev) }

// finish ends a task for good (Life.Finish), kept in the record.
func (t told) finish(task *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail) {
	finish(t.life, t.rec, task, status, exitCode, reason, d)
}

// tell stamps ev with the time, keeps it in rec and tells life.
func tell(life Life, rec *record, ev event.Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if ev.Task != nil {
		rec.saw(ev)
	}
	life.Emit(ev)
}

// finish ends t for good through life, kept in rec as its final event.
func finish(life Life, rec *record, t *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail) {
	rec.saw(event.Event{Kind: event.TaskEnded, End: event.EndFinal, Task: t, Status: status, Detail: d})
	life.Finish(t, status, exitCode, reason, d)
}

// say tells the run's status line (and log) a message.
func say(life Life, line string) { life.Emit(event.Event{Kind: event.RunStatus, Line: line}) }
