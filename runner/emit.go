package runner

import (
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/results"
)

// emitter carries events from the scheduler's goroutines to the output, which one goroutine
// (the pump) owns.
type emitter struct {
	events chan event.Event
	out    output.Output
	done   chan struct{}
}

// startEmitter starts the pump. Between events it ticks the output: every updateInterval
// for the live view (bashful's update-interval), four times a second otherwise.
func startEmitter(o output.Options, mode output.Mode, updateInterval time.Duration) *emitter {
	e := &emitter{events: make(chan event.Event, 4096), out: output.New(mode, o), done: make(chan struct{})}
	if updateInterval <= 0 || mode != output.Live {
		updateInterval = 250 * time.Millisecond
	}
	go e.pump(updateInterval)
	return e
}

func (e *emitter) pump(interval time.Duration) {
	defer close(e.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-e.events:
			if !ok {
				return
			}
			e.out.Event(ev)
		case now := <-tick.C:
			e.out.Tick(now)
		}
	}
}

// close drains the events and ends the output with the run's results.
func (e *emitter) close(res *results.Run) error {
	close(e.events)
	<-e.done
	return e.out.Close(res)
}

func (r *run) emit(ev event.Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	r.ev.events <- ev
}
