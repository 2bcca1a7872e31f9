// Package prune is a run's early stopping: a consumer of the run's events that feeds each
// trial's values of its block's early-stop metric, step by step, to the block's rule
// (runner/earlystop), and stops through the run's Stopper the trials the rule names. A
// stopped trial ends as pruned: SIGTERM to its process group, SIGKILL after the grace; not
// a failure, not retried; its metrics so far are kept; its GPU room goes back to the line
// as its processes end.
package prune

import (
	"cmp"
	"sync"
	"time"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Options configures a Pruner.
type Options struct {
	// Store is where a block's rule keeps its rung values (the claims prefix, shared by
	// every runall of the sweep); nil, or a nil Store: in memory. Asked once per block,
	// when its first value arrives.
	Store func(block *plan.Task) (earlystop.Store, error)
	// Drain bounds how long the run's end waits for the values still queued to be written
	// (DefaultDrain when 0).
	Drain time.Duration
}

// DefaultDrain is how long the run's end waits for the values still queued: a few hundred
// requests to a store that answers.
const DefaultDrain = 30 * time.Second

// Pruner is the early-stopping consumer. Each block's decisions run on a goroutine of its
// own, in the order the values came, so that a rule that reads a remote store never holds
// up the run's events. What goes wrong there (a rung value that could not be read: the
// trial runs on) is told as a status line with the next event. The goroutines end with the
// run: its RunEnded event waits for them to write what they hold; Close also waits.
type Pruner struct {
	o      Options
	blocks map[*earlystop.Config]*plan.Task // each rule's block, by its config
	order  []*earlystop.Config              // the rules in plan order
	absent map[*earlystop.Config]*absence   // whether each rule's metric is reported

	mu      sync.Mutex
	stopper executor.Stopper
	rules   map[*earlystop.Config]*worker
	closed  bool
	pending []string // warnings not yet told
	wg      sync.WaitGroup
}

// New is the pruner of p's blocks that set early-stop; nil when none does.
func New(p *plan.Plan, o Options) *Pruner {
	pr := &Pruner{o: o, blocks: map[*earlystop.Config]*plan.Task{}, rules: map[*earlystop.Config]*worker{},
		absent: map[*earlystop.Config]*absence{}}
	for _, b := range p.Tasks {
		if b.IsBlock() && b.EarlyStop != nil {
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

// obs is one value of a trial's rule metric.
type obs struct {
	task  *plan.Task
	step  int
	value float64
}

// worker decides one block's values in order.
type worker struct {
	block *plan.Task
	rule  earlystop.Rule
	err   error // why the rule could not be made: its values are dropped

	mu      sync.Mutex
	queue   []obs
	wake    chan struct{}
	done    chan struct{}
	stopped map[*plan.Task]bool
}

// Event takes the values of each block's early-stop metric, and notices a rule whose metric
// no trial reports.
func (pr *Pruner) Event(ev event.Event, emit func(event.Event)) {
	if ev.Kind == event.RunEnded {
		// The run's last event: the process exits after it. The values still queued are
		// decided and written first, or a shared sweep's other runalls would never see them.
		// The workers never emit, so waiting here holds up nothing but the exit.
		pr.end()
		if !pr.wait(cmp.Or(pr.o.Drain, DefaultDrain)) {
			pr.warn("early-stop: values not written after " + cmp.Or(pr.o.Drain, DefaultDrain).String() + ": the other runalls of the sweep will not see them")
		}
		for _, c := range pr.order {
			if w := pr.absent[c].atEnd(pr.blocks[c], c.Metric); w != "" {
				pr.warn(w)
			}
		}
	}
	if a := pr.absenceOf(ev); a != nil {
		switch ev.Kind {
		case event.TaskStarted:
			a.ran = true
		case event.TaskMetric:
			if w := a.metric(pr.blocks[ev.Task.EarlyStop], ev.Task.EarlyStop.Metric, ev.Metric, ev.Step); w != "" {
				pr.warn(w)
			}
		}
	}
	pr.mu.Lock()
	warnings := pr.pending
	pr.pending = nil
	pr.mu.Unlock()
	for _, w := range warnings {
		emit(event.Event{Kind: event.RunStatus, Line: w})
	}
	if ev.Kind == event.RunEnded {
		return
	}
	if ev.Kind != event.TaskMetric || ev.Task == nil || ev.Task.EarlyStop == nil || ev.Metric != ev.Task.EarlyStop.Metric {
		return
	}
	w := pr.worker(ev.Task.EarlyStop)
	if w == nil {
		return
	}
	w.mu.Lock()
	w.queue = append(w.queue, obs{ev.Task, ev.Step, ev.Value})
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
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
	w := &worker{block: pr.blocks[c], wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: map[*plan.Task]bool{}}
	var st earlystop.Store
	if pr.o.Store != nil && w.block != nil {
		st, w.err = pr.o.Store(w.block)
	}
	if w.err == nil {
		w.rule, w.err = earlystop.New(*c, st)
	}
	if w.err != nil {
		pr.pending = append(pr.pending, "early-stop: "+w.err.Error()+": no trial is stopped early")
	}
	pr.rules[c] = w
	pr.wg.Add(1)
	go pr.run(w)
	return w
}

func (pr *Pruner) warn(msg string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.pending = append(pr.pending, msg)
}

// run decides w's values as they come, until Close.
func (pr *Pruner) run(w *worker) {
	defer pr.wg.Done()
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		for _, o := range batch {
			pr.decide(w, o)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-w.wake:
		case <-w.done:
			w.mu.Lock()
			left := len(w.queue)
			w.mu.Unlock()
			if left == 0 {
				return
			}
		}
	}
}

func (pr *Pruner) decide(w *worker, o obs) {
	if w.rule == nil || w.stopped[o.task] {
		return
	}
	d, err := w.rule.Observe(o.task.Key, o.step, o.value)
	if err != nil {
		pr.warn(o.task.Name + ": " + err.Error() + ": it runs on")
		return
	}
	if !d.Stop {
		return
	}
	pr.mu.Lock()
	s := pr.stopper
	pr.mu.Unlock()
	if s != nil && s.Stop(o.task, results.StatusPruned, d.Reason) {
		w.stopped[o.task] = true
	}
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
		close(w.done)
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
