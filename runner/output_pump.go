package runner

import (
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/results"
)

// outputPump is the outputs' consumer: it carries events from the emitting goroutines to
// the output, which one goroutine (the pump) owns.
type outputPump struct {
	events chan event.Event
	out    output.Output
	done   chan struct{}
}

// startOutput starts the pump. Between events it ticks the output: every updateInterval
// for the live view (bashful's update-interval), four times a second otherwise.
func startOutput(o output.Options, mode output.Mode, updateInterval time.Duration) *outputPump {
	// 256 events: bursts still pass without the emitters waiting (bashful's 09 file takes the
	// same time); 4096 of them were 983 KB that the GC counted as live (docs/benchmarks.md).
	e := &outputPump{events: make(chan event.Event, 256), out: output.New(mode, o), done: make(chan struct{})}
	if updateInterval <= 0 || mode != output.Live {
		updateInterval = 250 * time.Millisecond
	}
	go e.pump(updateInterval)
	return e
}

// Event hands ev to the pump. Metrics are not drawn: the output shows the lines they came
// in.
func (e *outputPump) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind != event.TaskMetric {
		e.events <- ev
	}
}

func (e *outputPump) pump(interval time.Duration) {
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
func (e *outputPump) close(res *results.Run) error {
	close(e.events)
	<-e.done
	return e.out.Close(res)
}
