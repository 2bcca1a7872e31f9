package runner

import (
	"bufio"
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
	w      *bufio.Writer // the plain and JSON outputs' stdout, written out per burst; nil live
}

// startOutput starts the pump. Between events it ticks the output: every updateInterval
// for the live view (bashful's update-interval), four times a second otherwise.
func startOutput(o output.Options, mode output.Mode, updateInterval time.Duration) *outputPump {
	// 256 events: bursts still pass without the emitters waiting (bashful's 09 file takes the
	// same time); 4096 of them were 983 KB that the GC counted as live (docs/benchmarks.md).
	e := &outputPump{events: make(chan event.Event, 256), done: make(chan struct{})}
	if mode != output.Live {
		// A line per write(2) cost a chatty trial a core at 110k lines/s: the lines of a
		// burst go out together, once the pump has no event left to take. The live view
		// draws a frame per tick, and asks its terminal for its size.
		e.w = bufio.NewWriterSize(o.W, 64<<10)
		o.W = e.w
	}
	e.out = output.New(mode, o)
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
			if len(e.events) == 0 {
				e.flush()
			}
		case now := <-tick.C:
			e.out.Tick(now)
			e.flush()
		}
	}
}

// flush writes out what the plain or JSON output wrote; a stdout that cannot take it (closed)
// is no reason to stop, as before.
func (e *outputPump) flush() {
	if e.w != nil {
		_ = e.w.Flush()
	}
}

// close drains the events and ends the output with the run's results.
func (e *outputPump) close(res *results.Run) error {
	close(e.events)
	<-e.done
	err := e.out.Close(res)
	e.flush()
	return err
}
