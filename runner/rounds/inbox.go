package rounds

import (
	"sync"

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

// inbox is a block's notes on their way from the run's events to its goroutine: the
// emitter only appends, and never waits.
type inbox struct {
	mu      sync.Mutex
	settled *sync.Cond // broadcast as notes are handled
	pushed  int        // notes pushed so far
	handled int        // notes handled so far
	queue   []note
	wake    chan struct{}
	done    chan struct{}
}

func newInbox() *inbox {
	in := &inbox{wake: make(chan struct{}, 1), done: make(chan struct{})}
	in.settled = sync.NewCond(&in.mu)
	return in
}

func (in *inbox) push(n note) {
	in.mu.Lock()
	in.queue = append(in.queue, n)
	in.pushed++
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// take is the notes pushed since the last take.
func (in *inbox) take() []note {
	in.mu.Lock()
	defer in.mu.Unlock()
	batch := in.queue
	in.queue = nil
	return batch
}

// handledN says that n more notes are handled.
func (in *inbox) handledN(n int) {
	in.mu.Lock()
	in.handled += n
	in.settled.Broadcast()
	in.mu.Unlock()
}

// empty reports whether no note waits.
func (in *inbox) empty() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.queue) == 0
}

// settle waits until the notes pushed so far are handled.
func (in *inbox) settle() {
	in.mu.Lock()
	defer in.mu.Unlock()
	for n := in.pushed; in.handled < n; {
		in.settled.Wait()
	}
}

// close ends the block's goroutine once the notes pushed so far are handled.
func (in *inbox) close() {
	in.settle()
	close(in.done)
}
