package rounds

import (
	"fmt"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// note is one thing a block's goroutine reacts to, in the order the run told them.
type note struct {
	kind   int
	t      *plan.Task
	step   int
	value  float64
	status results.Status // noteEnded: how it ended
}

const (
	noteValue  = iota // a value of the rule's metric
	notePaused        // its pause completed
	noteEnded         // it ended for good
)

// inbox is a block's events on their way from the run to its goroutine: an event.Queue,
// the one inbox type of the stream's consumers (the emitter only puts, and never waits;
// past the queue's bound a trial's newest value replaces its one still queued, and its
// pauses and ends are always kept), and a count of what was put and handled, so that
// settle can wait for the goroutine to catch up.
type inbox struct {
	q       *event.Queue
	mu      sync.Mutex
	settled *sync.Cond // broadcast as events are handled
	put     int        // events put so far
	handled int        // events handled (or coalesced into one handled) so far
}

func newInbox() *inbox {
	in := &inbox{q: event.NewQueue(event.QueueLimits{})}
	in.settled = sync.NewCond(&in.mu)
	return in
}

func (in *inbox) push(ev event.Event) {
	if in.q.Put(ev) {
		in.mu.Lock()
		in.put++
		in.mu.Unlock()
	}
}

// handledN says that n more events are handled.
func (in *inbox) handledN(n int) {
	in.mu.Lock()
	in.handled += n
	in.settled.Broadcast()
	in.mu.Unlock()
}

// settle waits until the events put so far are handled.
func (in *inbox) settle() {
	in.mu.Lock()
	defer in.mu.Unlock()
	for in.handled < in.put {
		in.settled.Wait()
	}
}

// close ends the block's goroutine once it has handled the events put so far.
func (in *inbox) close() { in.q.Close() }

// coalesced says that n values were replaced before the block's goroutine took them.
func (blk *block) coalesced(n int) {
	blk.say(fmt.Sprintf("early-stop: %s: %d values were replaced by their trial's newer one before the rule took them (it reads its board slowly): a trial's round takes its newer value",
		blk.b.Name, n))
}
