package searchsource

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/search"
)

// Source is the trial source of a block whose child sets search: {ask, tell}: when
// the scheduler has room, it asks the user's sampler for trials, one ask per free slot, all
// at once (once the first ask has returned: it may create the sampler's storage, which
// concurrent first asks race to create; Optuna's SQLite schema did), and hands each trial
// over as soon as its ask returns; as each trial ends, it
// tells the sampler how, beside the sweep. Neither waits for the other: a sampler's storage
// takes concurrent commands (Optuna's does), and a slow tell must not hold the next trial.
// Every ask and tell is bounded by search: timeout; the asks end at the first signal, the
// tells the grace period after it (stopping).
type Source struct {
	run     Run
	stop    Gate   // once met, no trial is asked for
	mask    Masker // each trial passes it as it is made
	plan    *plan.Plan
	tmpl    *plan.Task
	sampler search.Sampler
	block   *plan.Task // tmpl's: where its trials stand, for the outputs (Run.Made)

	asks   asking
	tells  tellCount
	trials madeTrials
}

// asking is the asks under way and the trials they made that the scheduler has not taken.
type asking struct {
	mu       sync.Mutex
	ready    chan struct{} // sends when an ask ended
	trials   []*sched.Trial
	running  int             // asks under way
	started  int             // asks started, of trials: N
	answered bool            // an ask returned a trial: the sampler's storage exists
	failed   bool            // an ask failed: no more are started
	ctx      context.Context // the asks': ended by the first signal, or the block's end
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// madeTrials is what the source keeps of the trials it made.
type madeTrials struct {
	mu      sync.Mutex
	numbers map[*plan.Task]int // each trial's number in the sampler
	names   map[string]bool    // the names given, which a trial must not share
	nextID  int
}

// Run is what a search's source tells the run and asks of it.
type Run interface {
	Say(line string) // a status line
	Halted() bool
	FailUnrunnable(t *plan.Task, why string) // the template, with what its sampler said
	Results(trial *plan.Task) []results.Task // the results of trial's commands so far
	MaxID() int                              // the highest task ID the run has seen
	Made(t, block *plan.Task)                // a trial made as the run went, for the outputs
	// Varied says whether trial t last ran with values other than its sampler's (on-oom
	// halved one): what it achieved then is no measure of what was proposed.
	Varied(t *plan.Task) bool
	// UntilStop is ctx ended at the first signal too (the asks); Recording ends it --grace
	// after it (the tells).
	UntilStop(ctx context.Context) (context.Context, context.CancelFunc)
	Recording(ctx context.Context) (context.Context, context.CancelFunc)
}

// Gate is stop-when's gate (stopwhen.Watch): once it is closed no trial is asked for.
type Gate interface {
	Gate() (reason string, skip bool)
}

// Masker is the run's secrets (mask.Masker): a trial's params named as secrets are learned,
// and each trial passes the task gate as it is made.
type Masker interface {
	Learn(exported []string)
	Task(t *plan.Task)
}

// Options is what a search's source takes from the run when it is made.
type Options struct {
	Run  Run
	Stop Gate
	Mask Masker
	Plan *plan.Plan
	Env  []string // the run's environment, which the sampler runs in
}

// New is the source of a block of o.Plan whose one child, tmpl, sets search: (Child).
func New(o Options, block, tmpl *plan.Task) *Source {
	return &Source{run: o.Run, stop: o.Stop, mask: o.Mask, plan: o.Plan, tmpl: tmpl,
		sampler: search.Sampler{Spec: tmpl.Search, Dir: o.Plan.Dir, Env: slices.Clone(o.Env)},
		block:   block, asks: asking{ready: make(chan struct{}, 1)},
		trials: madeTrials{numbers: map[*plan.Task]int{}, names: map[string]bool{}}}
}

// Next hands over the trials whose asks returned, and starts an ask for each slot that
// neither they nor the asks under way will fill, up to trials: N in all. A sampler that
// fails or prints no trial fails the search's template with what it said; no more are
// asked for, and the trials already asked for run on.
func (s *Source) Next(ctx context.Context, want int) ([]*sched.Trial, bool) {
	a := &s.asks
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.trials
	a.trials = nil
	_, met := s.stop.Gate()
	stopped := a.failed || met || s.run.Halted() || ctx.Err() != nil
	for !stopped && a.started < s.tmpl.Search.Trials && a.running+len(out) < want && (a.answered || a.started == 0) {
		if a.ctx == nil {
			a.ctx, a.cancel = s.run.UntilStop(context.WithoutCancel(ctx))
		}
		a.started++
		a.running++
		a.wg.Add(1)
		go s.askOne(a.ctx)
	}
	more := a.running > 0 || !stopped && a.started < s.tmpl.Search.Trials
	return out, more
}

// askOne runs one ask and hands its trial to the next Next.
func (s *Source) askOne(ctx context.Context) {
	a := &s.asks
	defer a.wg.Done()
	tr, err := s.sampler.Ask(ctx)
	var t *plan.Task
	if err == nil {
		t, err = s.trial(tr)
	}
	a.mu.Lock()
	a.running--
	switch {
	case ctx.Err() != nil: // the run is stopping, or the block is over: not a failure
	case err != nil && !a.failed:
		// The template fails with the sampler's error, in the summary and the results
		// beside the trials it made; those already asked for run on.
		a.failed = true
		defer s.run.FailUnrunnable(s.tmpl, err.Error()+"; no more trials are asked for")
	case err == nil:
		a.trials = append(a.trials, &sched.Trial{Task: t})
		a.answered = true
	}
	a.mu.Unlock()
	a.wake()
}

// wake has the scheduler, if it waits on Ready, ask Next again.
func (a *asking) wake() {
	select {
	case a.ready <- struct{}{}:
	default:
	}
}

// trial makes the task of a trial the sampler handed out: its params are data (plan.Instantiate),
// a param named as a secret is one, and the task passes the mask gate before anything shows it.
func (s *Source) trial(tr search.Trial) (*plan.Task, error) {
	t, err := s.tmpl.Instantiate(tr.Number, tr.Params)
	if err != nil {
		return nil, fmt.Errorf("search: trial %d: %w", tr.Number, err)
	}
	var named []string
	for _, p := range tr.Params {
		named = append(named, p.Name+"="+p.Value)
	}
	s.mask.Learn(named)
	s.mask.Task(t)
	m := &s.trials
	m.mu.Lock()
	defer m.mu.Unlock()
	t.ID = s.newID()
	s.nameApart(t, tr.Number)
	m.numbers[t] = tr.Number
	s.run.Made(t, s.block)
	return t, nil
}

// nameApart gives t a name no trial of the search has: a sampler may hand out the same params
// twice, or a name may leave out the param that differs. The trial's number tells it apart.
func (s *Source) nameApart(t *plan.Task, number int) {
	base := t.Name
	for n := 1; s.trials.names[t.Name]; n++ {
		t.Name = fmt.Sprintf("%s [trial=%d]", base, number)
		if n > 1 {
			t.Name = fmt.Sprintf("%s [trial=%d #%d]", base, number, n)
		}
	}
	s.trials.names[t.Name] = true
}

// newID numbers a trial after every task the run has seen; s.trials.mu is held.
func (s *Source) newID() int {
	if s.trials.nextID == 0 {
		s.trials.nextID = s.run.MaxID() + 1
		plan.Walk(s.plan.Tasks, func(t *plan.Task) { s.trials.nextID = max(s.trials.nextID, t.ID+1) })
	}
	id := s.trials.nextID
	s.trials.nextID += 1 + len(s.tmpl.Steps)
	return id
}

// Ready sends when an ask ended: Next has its trial, or knows the asking is over.
func (s *Source) Ready() <-chan struct{} { return s.asks.ready }

// Start runs every trial asked for.
func (s *Source) Start(context.Context, *sched.Trial) bool { return true }

// Ended tells the sampler how a trial ended: complete with the objective's value, pruned,
// or fail (it failed, or reported no value). The tell runs beside the sweep, so that the
// trial's room goes to the next at once.
func (s *Source) Ended(ctx context.Context, tr *sched.Trial, _ sched.Outcome) {
	defer s.asks.wake() // a trial ended while paused leaves the scheduler waiting on Ready
	s.trials.mu.Lock()
	number, ok := s.trials.numbers[tr.Task]
	s.trials.mu.Unlock()
	if !ok {
		return
	}
	state, values := s.outcome(tr.Task)
	s.tells.add(1)
	go func() {
		defer s.tells.add(-1)
		ctx, cancel := s.run.Recording(context.WithoutCancel(ctx))
		defer cancel()
		if err := s.sampler.Tell(ctx, number, values, state); err != nil {
			s.run.Say(tr.Task.Name + ": " + err.Error())
		}
	}()
}

// outcome is how a trial ended, in the sampler's words, and its objectives' values, in the
// order config objective lists them; a trial that succeeded without one is told as failed,
// and so is one that ran with values its sampler did not propose (on-oom halved one): the
// sampler would file what they achieved under its own.
func (s *Source) outcome(t *plan.Task) (state string, values []string) {
	if s.run.Varied(t) {
		s.run.Say(t.Name + ": ran with values its sampler did not propose (on-oom): told as failed")
		return search.StateFail, nil
	}
	objs := s.plan.Config.Objectives // the plan requires an objective with search:
	state = search.StateComplete
	got := make(map[string]float64, len(objs))
	for _, res := range s.run.Results(t) {
		switch res.Status {
		case results.StatusPruned:
			state = search.StatePruned
		case results.StatusOK, results.StatusIgnored:
		default:
			state = search.StateFail
		}
		for _, o := range objs {
			if x, ok := res.Metrics[o.Metric]; ok {
				got[o.Metric] = x
			}
		}
	}
	for _, o := range objs {
		if _, ok := got[o.Metric]; !ok && state == search.StateComplete {
			s.run.Say(fmt.Sprintf("%s: reported no %s: told as failed", t.Name, o.Metric))
			state = search.StateFail
		}
	}
	if state != search.StateComplete {
		return state, nil
	}
	for _, o := range objs {
		values = append(values, strconv.FormatFloat(got[o.Metric], 'g', -1, 64))
	}
	return state, values
}

// Finish ends the asks still under way (the block is over) and waits for them and for the
// tells, which their bounds end.
func (s *Source) Finish() {
	s.asks.mu.Lock()
	if s.asks.cancel != nil {
		s.asks.cancel()
	}
	s.asks.mu.Unlock()
	s.asks.wg.Wait()
	s.tells.wait()
}

// tellCount counts the tells under way. Unlike a WaitGroup, it may be waited on while a
// trial's end adds one.
type tellCount struct {
	mu   sync.Mutex
	n    int
	zero *sync.Cond
}

func (c *tellCount) add(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += d
	if c.n == 0 && c.zero != nil {
		c.zero.Broadcast()
	}
}

// wait returns once no tell is under way.
func (c *tellCount) wait() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.zero == nil {
		c.zero = sync.NewCond(&c.mu)
	}
	for c.n > 0 {
		c.zero.Wait()
	}
}

// Child is the child of block b that sets search:, nil when none does (the plan allows it
// only as a block's one child).
func Child(b *plan.Task) *plan.Task {
	if len(b.Parallel) == 1 && b.Parallel[0].Search != nil {
		return b.Parallel[0]
	}
	return nil
}
