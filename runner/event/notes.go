package event

import (
	"sync"
	"sync/atomic"
)

// Notes are the lines a consumer has to tell the run (a warning its goroutine came to, say),
// kept until the stream takes them: after each event it delivers, the stream emits every
// line a consumer's Notes hold as a RunStatus event, which every consumer then sees. So a
// consumer that works on a goroutine of its own says what it must without holding the
// emitter or the stream: it has nothing to flush, and waits for nothing. A line said between
// events is not kept waiting for the next one either: the stream it was added to tells it on
// a goroutine of its own (Stream.Add hands it the wake). A line said after the run's last
// event is not told. The zero value is ready to use.
type Notes struct {
	held  atomic.Int32 // lines held: the stream's check on every event, without the lock
	mu    sync.Mutex
	lines []string
	wake  func() // the stream's: tell what is held now; nil before Stream.Add
}

// Say keeps line to be told after the event the stream delivers next (or delivers now), or
// at once when no event is being delivered.
func (n *Notes) Say(line string) {
	n.mu.Lock()
	n.lines = append(n.lines, line)
	n.held.Add(1)
	wake := n.wake
	n.mu.Unlock()
	if wake != nil {
		go wake() // the caller may be a consumer inside a delivery, which holds the stream
	}
}

// wakeWith makes Say call wake.
func (n *Notes) wakeWith(wake func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.wake = wake
}

// take is the lines said since the last take.
func (n *Notes) take() []string {
	if n.held.Load() == 0 {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	lines := n.lines
	n.lines = nil
	n.held.Store(0)
	return lines
}

// Teller is a consumer with lines to tell: Stream.Add takes its Notes, which the stream
// empties after each event it delivers.
type Teller interface {
	Notes() *Notes
}
