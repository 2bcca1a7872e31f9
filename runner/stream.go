package runner

import (
	"github.com/runall/runall/runner/plan"
	"time"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/results"
)

// openStream adds the run's consumers to its one lifecycle stream, in the order they see
// each event: the ledger (the results recorder) first, so that a consumer after it that
// reads a task's result reads it with the event applied; then the recorder of the run's
// end (results file, report, upload, notify), Prometheus, stop-when, early stopping, the
// claims (added as they are joined), Options.Consumers, and the output last. To add a
// consumer, add it here (or pass it in Options.Consumers); neither the scheduler nor the
// executor changes.
func (r *run) openStream() {
	stream := r.life.stream
	stream.Add(r.life.ledger)
	stream.Add(r.rec)
	if r.met != nil {
		stream.Add(r.met)
	}
	stream.Add(r.launch.stop)
	if p := r.newPruner(); p != nil {
		stream.Add(p)
	}
	for _, c := range r.opts.Consumers {
		if s, ok := c.(StopperUser); ok {
			s.UseStopper(r.launch.running)
		}
		stream.Add(c)
	}
	hist := r.hist
	r.out = startOutput(output.Options{
		Plan: r.plan, W: r.opts.Stdout, Color: r.opts.Color, Width: r.opts.Width,
		StatusEvery: r.opts.StatusEvery, Now: time.Now,
		Estimate: func(t *plan.Task) (time.Duration, bool) { return hist.Duration(t.Key) },
	}, r.opts.Mode, r.plan.Config.UpdateInterval)
	stream.Add(r.out)
}

// StopperUser is a consumer that stops running trials (early stopping, say): the run hands
// it its Stopper before the first event.
type StopperUser interface {
	UseStopper(s executor.Stopper)
}

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
