package runner

import (
	"time"

	"github.com/runall/runall/runner/diverge"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/failfast"
	"github.com/runall/runall/runner/hang"
	"github.com/runall/runall/runner/output"
	"github.com/runall/runall/runner/plan"
)

// openStream adds the run's consumers to its one lifecycle stream, in the order they see
// each event: the ledger (the results recorder) first, so that a consumer after it that
// reads a task's result reads it with the event applied; then the recorder of the run's
// end (results file, report, upload, notify), Prometheus (with --serve), stop-when, the
// watch of diverged trials (diverged-on: runner/diverge, on the emitting goroutine: it only
// asks the Stopper), the watch of broken sweeps (fail-fast: runner/failfast, which fails
// and halts the run), early stopping (early-stop: rules of runner/prune), early stopping that pauses (runner/rounds:
// sha, hyperband, pbt), each resource's consumer (the GPU resource's: gpu-sharing: progress,
// on-oom's notes, the trials paused off a GPU out of service resumed), the server
// (--serve), Options.Consumers (each handed the Stopper or Pauser it asks for) and the
// output last. A claims sweep is no consumer: its source records each trial as it ends
// (runner/claimsource). The ledger, the recorder, Prometheus, stop-when and the resources' consumers take
// each event on the emitting goroutine (cheap, in memory, and the ledger's place first is
// what the others rely on); early stopping, the rules that pause and the output put it in
// an event.Queue, their one inbox type, and work on goroutines of their own, saying what
// they must through their event.Notes, which the stream tells after each event. To add a
// consumer, add it here (or pass it in Options.Consumers); neither the scheduler nor the
// executor changes.
func (r *runDriver) openStream() {
	stream := r.life.stream
	stream.Add(r.life.ledger)
	stream.Add(r.rec)
	if r.met != nil {
		stream.Add(r.met)
	}
	stream.Add(r.launch.stop)
	if d := diverge.New(r.plan); d != nil {
		d.UseStopper(r.launch.procs.Running)
		stream.Add(d)
	}
	ho := hang.Options{Ender: r.launch.procs.Running}
	for _, res := range r.launch.res {
		if h, ok := res.(hang.Holder); ok {
			ho.Hold = h // a hung trial's GPUs wait for its processes to leave them
		}
	}
	if h := hang.New(r.plan, ho); h != nil {
		stream.Add(h)
	}
	if f := failfast.New(r.plan, r.life.failWith); f != nil {
		stream.Add(f)
	}
	if p := r.newPruner(); p != nil {
		stream.Add(p)
	}
	if rr := newRoundsHook(r).rounds(r.plan); rr != nil {
		stream.Add(rr)
	}
	for _, res := range r.launch.res {
		if c := res.Consumer(); c != nil {
			stream.Add(c)
		}
	}
	if r.opts.Server != nil {
		stream.Add(r.opts.Server)
	}
	for _, c := range r.opts.Consumers {
		if s, ok := c.(StopperUser); ok {
			s.UseStopper(r.launch.procs.Running)
		}
		if p, ok := c.(PauserUser); ok && r.pause != nil {
			p.UsePauser(r.pause)
		}
		stream.Add(c)
	}
	hist := r.hist
	r.out = startOutput(output.Options{
		Plan: r.plan, W: r.opts.Output.Stdout, Color: r.opts.Output.Color, Width: r.opts.Output.Width,
		StatusEvery: r.opts.Output.StatusEvery, Now: time.Now,
		Estimate: func(t *plan.Task) (time.Duration, bool) { return hist.Duration(t.Key) },
		ParentOf: r.life.made.parentOf,
	}, r.opts.Output.Mode, r.plan.Config.UpdateInterval, r.opts.runDir())
	stream.Add(r.out)
}

// StopperUser is a consumer of Options.Consumers that stops running trials (early
// stopping, say): openStream hands it the run's Stopper before the first event. The run's
// own pruner is handed it as it is made (prune_hook.go).
type StopperUser interface {
	UseStopper(s executor.Stopper)
}
