package runner

import (
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/results"
)

// openStream makes the run's one lifecycle stream and adds its consumers, in the order they
// see each event: the results recorder first, so that a consumer after it that reads a
// task's result reads it with the event applied. To add a consumer, add it here (or pass it
// in Options.Consumers); neither the scheduler nor the executor changes.
func (r *run) openStream() {
	r.stream = &event.Stream{}
	r.stream.Add(r.ledger)
	if r.met != nil {
		r.stream.Add(r.met)
	}
	r.stream.Add(r.stop)
	for _, c := range r.opts.Consumers {
		if s, ok := c.(StopperUser); ok {
			s.UseStopper(r.running)
		}
		r.stream.Add(c)
	}
	r.out = startOutput(r.outputOptions(), r.opts.Mode, r.plan.Config.UpdateInterval)
	r.stream.Add(r.out)
}

// StopperUser is a consumer that stops running trials (early stopping, say): the run hands
// it its Stopper before the first event.
type StopperUser interface {
	UseStopper(s executor.Stopper)
}

// emit sends ev on the run's stream.
func (r *run) emit(ev event.Event) { r.stream.Emit(ev) }

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
	e := &outputPump{events: make(chan event.Event, 4096), out: output.New(mode, o), done: make(chan struct{})}
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
