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

// What a task ran so far (its attempts, its first start, whether it ended ok, the series and
// resumes of its last pause or end) is the run's record of it, Life.Result: the ledger's,
// which the launcher's events fill as they are told. The launcher keeps only what no event
// says: whose script ran to its end as its pause was awaited (ranOut).

// attempts is how often t was started so far (across requeues).
func attempts(life Life, t *plan.Task) int { return life.Result(t).Attempts }

// startedAt is when t's first attempt started (zero before).
func startedAt(life Life, t *plan.Task) time.Time { return life.Result(t).StartedAt }

// endedOK reports whether t ended for good and counted as a success (ok, or ignored).
func endedOK(life Life, t *plan.Task) bool {
	s := life.Result(t).Status
	return s == results.StatusOK || s == results.StatusIgnored
}

// resumesOf is t's starts from a kept checkpoint as told so far: a copy, the caller's to
// append to.
func resumesOf(life Life, t *plan.Task) []results.Resume {
	return slices.Clone(life.Result(t).Resumes)
}

// seriesOf is t's metric series as its last pause or end told it: a copy.
func seriesOf(life Life, t *plan.Task) map[string][]float64 {
	return maps.Clone(life.Result(t).MetricSeries)
}

// ranOut is, by task ID, the number of exploits +1 of the attempt whose script ran to its
// end (exit 0, unasked) as a pause was awaited: it paused there, at its round, with nothing
// left to run. 0: none did.
type ranOut struct {
	mu   sync.Mutex
	byID map[int]int
}

// ranToEnd records that t's attempt, run with exploits exploits so far (pbt), ended on its
// own as it paused: its script ran to its last step.
func (r *ranOut) ranToEnd(t *plan.Task, exploits int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[int]int{}
	}
	r.byID[t.ID] = exploits + 1
}

// ranOut reports whether t's script ran to its end at its last pause, and nothing changed
// since: no exploit (pbt) gave it another checkpoint to go on from (exploits so far).
func (r *ranOut) ranOut(t *plan.Task, exploits int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[t.ID] == exploits+1
}

// told is how a command tells the run what happens: through its Life.
type told struct {
	life Life
}

// emit tells the stream ev, stamped now.
func (t told) emit(ev event.Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	t.life.Emit(ev)
}

// finish ends a task for good (Life.Finish).
func (t told) finish(task *plan.Task, status results.Status, exitCode int, reason string, d *event.Detail) {
	t.life.Finish(task, status, exitCode, reason, d)
}

// say tells the run's status line (and log) a message.
func say(life Life, line string) { life.Emit(event.Event{Kind: event.RunStatus, Line: line}) }
