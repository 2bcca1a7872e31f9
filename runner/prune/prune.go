// Package prune is a run's early stopping: a consumer of the run's events that feeds each
// trial's values of its block's early-stop metric, step by step, to the block's rule
// (runner/earlystop), and stops through the run's Stopper the trials the rule names. A
// stopped trial ends as pruned: SIGTERM to its process group, SIGKILL after the grace; not
// a failure, not retried; its metrics so far are kept; its GPU room goes back to the line
// as its processes end. Each block's values wait for its goroutine in an event.Queue, and
// what the pruner says goes to its event.Notes: the stream's emitter never waits on it.
// It takes only the blocks whose rule stops trials (asha, median): those whose rule pauses
// them (sha, hyperband, pbt) are runner/rounds' alone, in a plan with blocks of both kinds.
package prune

import (
	"cmp"
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/forecast"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Options configures a Pruner.
type Options struct {
	// Store is where a block's rule keeps its rung values (the claims prefix, shared by
	// every runall of the sweep); nil, or a nil Store: in memory. Asked once per block,
	// when its first value arrives; say is how the store tells what it cannot read (the
	// pruner's notes, safe on the block's goroutine).
	Store func(block *plan.Task, say func(string)) (earlystop.Store, error)
	// Drain bounds how long the run's end waits for the values still queued to be written
	// (DefaultDrain when 0).
	Drain time.Duration
	// Record keeps the figures of each decision of method forecast for the trial's record
	// (results.json); nil: they are not kept. Called on a block's goroutine.
	Record func(t *plan.Task, f results.Forecast)
	// Pauser pauses and resumes trials at their checkpoints, for method forecast's
	// freeze-thaw (pause-below, thaw.go); nil: a trial stops or goes on.
	Pauser Pauser
}

// DefaultDrain is how long the run's end waits for the values still queued: a few hundred
// requests to a store that answers.
const DefaultDrain = 30 * time.Second

// Pruner is the early-stopping consumer. Each block's decisions run on a goroutine of its
// own, which takes the block's values from an event.Queue (the one inbox type of the
// stream's consumers), in the order they came, so that a rule that reads a remote store
// never holds up the run's events; a block's queue holds at most 4096 values (beyond that
// a trial's newest value replaces its one still queued, and that is said). What goes wrong
// there (a rung value that could not be read: the trial runs on) is said through the
// pruner's Notes, which the stream tells after its next event. The goroutines end with the
// run: its RunEnded event waits for them to write what they hold; Close also waits.
type Pruner struct {
	o      Options
	blocks map[*earlystop.Config]*plan.Task // each rule's block, by its config
	order  []*earlystop.Config              // the rules in plan order
	absent map[*earlystop.Config]*absence   // whether each rule's metric is reported
	notes  event.Notes                      // warnings, told by the stream

	mu      sync.Mutex
	stopper executor.Stopper
	rules   map[*earlystop.Config]*worker
	closed  bool
	wg      sync.WaitGroup
	settled sync.Once // finish, once: at Settle or RunEnded, whichever comes first
}

// New is the pruner of p's blocks that set early-stop; nil when none does.
func New(p *plan.Plan, o Options) *Pruner {
	pr := &Pruner{o: o, blocks: map[*earlystop.Config]*plan.Task{}, rules: map[*earlystop.Config]*worker{},
		absent: map[*earlystop.Config]*absence{}}
	for _, b := range p.Tasks {
		if b.IsBlock() && b.EarlyStop != nil && !b.EarlyStop.Pauses() { // rules that pause are runner/rounds'
			pr.blocks[b.EarlyStop] = b
			pr.order = append(pr.order, b.EarlyStop)
			pr.absent[b.EarlyStop] = &absence{}
		}
	}
	if len(pr.blocks) == 0 {
		return nil
	}
	return pr
}

// UseStopper is how the run hands the pruner what stops its trials.
func (pr *Pruner) UseStopper(s executor.Stopper) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.stopper = s
}

// worker decides one block's values in order.
type worker struct {
	block   *plan.Task
	rule    earlystop.Rule
	err     error        // why the rule could not be made: its values are dropped
	inbox   *event.Queue // the block's values on their way to its goroutine
	stopped map[*plan.Task]bool
	thaw    *thaw // forecast's freeze-thaw; nil without one
}

// Event takes the values of each block's early-stop metric, and notices a rule whose metric
// no trial reports.
func (pr *Pruner) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind == event.RunEnded {
		pr.Settle()
		return
	}
	if a := pr.absenceOf(ev); a != nil {
		switch ev.Kind {
		case event.TaskStarted:
			a.ran = true
		case event.TaskMetric:
			if w := a.metric(pr.blocks[ev.Task.EarlyStop], ev.Task.EarlyStop.Metric, ev.Metric, ev.Step); w != "" {
				pr.notes.Say(w)
			}
		}
	}
	if pr.thaws(ev) {
		if w := pr.worker(ev.Task.EarlyStop); w != nil {
			w.inbox.Put(ev) // its trials' starts and ends, in order with their values
		}
		return
	}
	if ev.Kind != event.TaskMetric || ev.Task == nil || ev.Task.EarlyStop == nil || ev.Metric != ev.Task.EarlyStop.Metric {
		return
	}
	if pr.blocks[ev.Task.EarlyStop] == nil {
		return // a rule that pauses (runner/rounds'): no worker of the pruner's decides it
	}
	if w := pr.worker(ev.Task.EarlyStop); w != nil {
		w.inbox.Put(ev)
	}
}

// thaws reports whether ev is a start, end or skip of a trial of a block under method
// forecast that the freeze-thaw follows.
func (pr *Pruner) thaws(ev event.Event) bool {
	switch ev.Kind {
	case event.TaskStarted, event.TaskEnded, event.TaskSkipped:
		return pr.o.Pauser != nil && ev.Task != nil && ev.Task.EarlyStop != nil && ev.Task.EarlyStop.Method == earlystop.Forecast &&
			pr.blocks[ev.Task.EarlyStop] != nil
	}
	return false
}

// Notes are what the pruner says: the stream tells them after each event.
func (pr *Pruner) Notes() *event.Notes { return &pr.notes }

// Settle decides and writes the values still queued, as the run's end does, so that the
// results the run gathers before its RunEnded hold every decision (forecast's figures);
// values that come after are dropped. RunEnded then has nothing left to wait for.
func (pr *Pruner) Settle() { pr.settled.Do(pr.finish) }

// finish is the run's last event: the process exits after it. The values still queued are
// decided and written first, or a shared sweep's other runalls would never see them. The
// workers never wait on the stream, so waiting here holds up nothing but the exit.
func (pr *Pruner) finish() {
	pr.end()
	if drain := cmp.Or(pr.o.Drain, DefaultDrain); !pr.wait(drain) {
		pr.notes.Say("early-stop: values not written after " + drain.String() + ": the other runalls of the sweep will not see them")
	}
	for _, c := range pr.order {
		if w := pr.absent[c].atEnd(pr.blocks[c], c.Metric); w != "" {
			pr.notes.Say(w)
		}
	}
}

// absenceOf is what is noticed of the metrics of ev's task's block; nil for a task without
// early-stop.
func (pr *Pruner) absenceOf(ev event.Event) *absence {
	if ev.Task == nil || ev.Task.EarlyStop == nil {
		return nil
	}
	return pr.absent[ev.Task.EarlyStop]
}

// worker is the block's worker, started with its first value; nil once closed.
func (pr *Pruner) worker(c *earlystop.Config) *worker {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return nil
	}
	if w, ok := pr.rules[c]; ok {
		return w
	}
	w := &worker{block: pr.blocks[c], inbox: event.NewQueue(event.QueueLimits{}), stopped: map[*plan.Task]bool{}}
	var st earlystop.Store
	if pr.o.Store != nil && w.block != nil {
		st, w.err = pr.o.Store(w.block, pr.notes.Say)
	}
	if w.err == nil {
		w.rule, w.err = newRule(*c, st)
	}
	if w.err != nil {
		pr.notes.Say("early-stop: " + w.err.Error() + ": no trial is stopped early")
	} else {
		w.thaw = newThaw(w.block, c, pr.o.Pauser, w.rule)
	}
	pr.rules[c] = w
	pr.wg.Add(1)
	go pr.run(w)
	return w
}

// run decides w's values as they come, until its inbox is closed and emptied.
func (pr *Pruner) run(w *worker) {
	defer pr.wg.Done()
	for range w.inbox.Ready() {
		evs, coalesced, last := w.inbox.Take()
		for _, ev := range evs {
			pr.decide(w, ev)
		}
		if coalesced > 0 {
			pr.notes.Say(fmt.Sprintf("early-stop: %s: %d values were replaced by their trial's newer one before the rule took them (it reads its store slowly): a trial may miss a rung",
				blockName(w.block), coalesced))
		}
		if last {
			return
		}
	}
}

// blockName names a rule's block in what the pruner says.
func blockName(b *plan.Task) string {
	if b == nil {
		return "a block"
	}
	return b.Name
}

func (pr *Pruner) decide(w *worker, ev event.Event) {
	if ev.Kind != event.TaskMetric {
		if w.thaw != nil {
			w.thaw.event(ev)
		}
		return
	}
	if w.rule == nil || w.stopped[ev.Task] {
		return
	}
	d, err := w.rule.Observe(ev.Task.Key, ev.Step, ev.Value)
	if err != nil {
		pr.notes.Say(ev.Task.Name + ": " + err.Error() + ": it runs on")
		return
	}
	paused := !d.Stop && w.thaw != nil && w.thaw.pause(ev, d.Forecast)
	if d.Forecast != nil {
		decision := "continue"
		switch {
		case d.Stop:
			decision = "stop"
		case paused:
			decision = "pause"
		}
		if pr.o.Record != nil {
			pr.o.Record(ev.Task, recordOf(d.Forecast, decision))
		}
	}
	if !d.Stop {
		return
	}
	pr.mu.Lock()
	s := pr.stopper
	pr.mu.Unlock()
	if s != nil && s.Stop(ev.Task, results.StatusPruned, d.Reason) {
		w.stopped[ev.Task] = true
	}
}

// newRule is the rule c names: forecast's, or one of runner/earlystop's.
func newRule(c earlystop.Config, st earlystop.Store) (earlystop.Rule, error) {
	if c.Method == earlystop.Forecast {
		return forecast.New(c, st)
	}
	return earlystop.New(c, st)
}

// recordOf is a forecast decision as results.json keeps it.
func recordOf(f *earlystop.ForecastFigures, decision string) results.Forecast {
	r := results.Forecast{Step: f.Step, At: f.At, Median: f.Median, Low: f.Low, High: f.High, Chance: f.Chance, Decision: decision}
	if f.HasIncumbent {
		inc := f.Incumbent
		r.Incumbent = &inc
		r.IncumbentFrom = "forecast"
		if f.Reached {
			r.IncumbentFrom = "reached"
		}
	}
	return r
}

// end has the workers finish what they hold and return; values that come after are dropped.
func (pr *Pruner) end() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return
	}
	pr.closed = true
	for _, w := range pr.rules {
		w.inbox.Close()
	}
}

// Close ends the workers and waits for them.
func (pr *Pruner) Close() {
	pr.end()
	pr.wg.Wait()
}

// wait waits up to d for the workers to end, and reports whether they did.
func (pr *Pruner) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		pr.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
