package runner

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

// searchSource is the trial source of a block whose child sets search: {ask, tell}: when
// the scheduler has room, it asks the user's sampler for trials, one ask each, and makes
// them from the child (its template); as each ends, it tells the sampler how. Sampler
// commands never run at once (a study's storage need not take concurrent writers), and a
// trial's tell runs beside the sweep, so that its GPU room is free at once; the next ask
// waits for the tells before it, so that the sampler has every result it can.
type searchSource struct {
	life    *lifecycle
	stop    *stopWhen // once met, no trial is asked for
	mask    *masker   // each trial passes it as it is made (mask_gate.go)
	plan    *plan.Plan
	tmpl    *plan.Task
	sampler search.Sampler

	cmds   sync.Mutex // one sampler command at a time
	tells  tellCount
	asked  int
	nextID int
	failed bool
	made   madeTrials
}

// madeTrials is what the source keeps of the trials it made.
type madeTrials struct {
	mu      sync.Mutex
	numbers map[*plan.Task]int // each trial's number in the sampler
	names   map[string]bool    // the names given, which a trial must not share
}

// newSearchSource is the source of a block of plan p whose one child, tmpl, sets search:;
// the sampler runs in the run's environment, base.
func newSearchSource(life *lifecycle, p *plan.Plan, tmpl *plan.Task, base []string, stop *stopWhen, mask *masker) *searchSource {
	return &searchSource{life: life, stop: stop, mask: mask, plan: p, tmpl: tmpl,
		made:    madeTrials{numbers: map[*plan.Task]int{}, names: map[string]bool{}},
		sampler: search.Sampler{Spec: tmpl.Search, Dir: p.Dir, Env: slices.Clone(base)}}
}

// Next asks the sampler for as many trials as could start, up to trials: N in all. A
// sampler that fails or prints no trial fails the run with what it said; the trials
// already asked for run on.
func (s *searchSource) Next(ctx context.Context, want int) ([]*sched.Trial, bool) {
	if s.failed || s.asked >= s.tmpl.Search.Trials {
		return nil, false
	}
	s.tells.wait() // the sampler learns every result before it proposes (and stop-when its end)
	var out []*sched.Trial
	for range min(want, s.tmpl.Search.Trials-s.asked) {
		if _, met := s.stop.gate(); met || ctx.Err() != nil || s.life.halted() {
			return out, false
		}
		s.cmds.Lock()
		tr, err := s.sampler.Ask(ctx)
		s.cmds.Unlock()
		var t *plan.Task
		if err == nil {
			t, err = s.trial(tr)
		}
		if err != nil {
			// The template fails with the sampler's error, in the summary and the results
			// beside the trials it made; those already asked for run on.
			s.failed = true
			s.life.failUnrunnable(s.tmpl, err.Error()+"; no more trials are asked for")
			return out, false
		}
		s.asked++
		out = append(out, &sched.Trial{Task: t})
	}
	return out, s.asked < s.tmpl.Search.Trials
}

// trial makes the task of a trial the sampler handed out: its params are data (plan.Instantiate),
// a param named as a secret is one, and the task passes the mask gate before anything shows it.
func (s *searchSource) trial(tr search.Trial) (*plan.Task, error) {
	t, err := s.tmpl.Instantiate(tr.Number, tr.Params)
	if err != nil {
		return nil, fmt.Errorf("search: trial %d: %w", tr.Number, err)
	}
	var named []string
	for _, p := range tr.Params {
		named = append(named, p.Name+"="+p.Value)
	}
	s.mask.learn(named)
	s.mask.task(t)
	t.ID = s.newID()
	s.made.mu.Lock()
	defer s.made.mu.Unlock()
	s.nameApart(t, tr.Number)
	s.made.numbers[t] = tr.Number
	return t, nil
}

// nameApart gives t a name no trial of the search has: a sampler may hand out the same params
// twice, or a name may leave out the param that differs. The trial's number tells it apart.
func (s *searchSource) nameApart(t *plan.Task, number int) {
	base := t.Name
	for n := 1; s.made.names[t.Name]; n++ {
		t.Name = fmt.Sprintf("%s [trial=%d]", base, number)
		if n > 1 {
			t.Name = fmt.Sprintf("%s [trial=%d #%d]", base, number, n)
		}
	}
	s.made.names[t.Name] = true
}

// newID numbers a trial after every task the run has seen.
func (s *searchSource) newID() int {
	if s.nextID == 0 {
		s.nextID = s.life.ledger.maxID() + 1
		plan.Walk(s.plan.Tasks, func(t *plan.Task) { s.nextID = max(s.nextID, t.ID+1) })
	}
	id := s.nextID
	s.nextID += 1 + len(s.tmpl.Steps)
	return id
}

// Ready is nil: the scheduler asks again when a trial ends.
func (s *searchSource) Ready() <-chan struct{} { return nil }

// Start runs every trial asked for.
func (s *searchSource) Start(context.Context, *sched.Trial) bool { return true }

// Ended tells the sampler how a trial ended: complete with the objective's value, pruned,
// or fail (it failed, or reported no value).
func (s *searchSource) Ended(ctx context.Context, tr *sched.Trial, _ sched.Outcome) {
	s.made.mu.Lock()
	number, ok := s.made.numbers[tr.Task]
	s.made.mu.Unlock()
	if !ok {
		return
	}
	state, value := s.outcome(tr.Task)
	s.tells.add(1)
	go func() {
		defer s.tells.add(-1)
		s.cmds.Lock()
		err := s.sampler.Tell(context.WithoutCancel(ctx), number, value, state)
		s.cmds.Unlock()
		if err != nil {
			s.life.say(tr.Task.Name + ": " + err.Error())
		}
	}()
}

// outcome is how a trial ended, in the sampler's words, and its objective's value.
func (s *searchSource) outcome(t *plan.Task) (state, value string) {
	metricName := "" // the plan requires an objective with search:
	if obj := s.plan.Config.Objective; obj != nil {
		metricName = obj.Metric
	}
	state = search.StateComplete
	var v float64
	has := false
	for _, c := range trialCommands(t) {
		res := s.life.ledger.result(c)
		switch res.Status {
		case results.StatusPruned:
			state = search.StatePruned
		case results.StatusOK, results.StatusIgnored:
		default:
			state = search.StateFail
		}
		if x, ok := res.Metrics[metricName]; ok && metricName != "" {
			v, has = x, true
		}
	}
	if state == search.StateComplete && !has {
		s.life.say(fmt.Sprintf("%s: reported no %s: told as failed", t.Name, metricName))
		state = search.StateFail
	}
	if state != search.StateComplete {
		return state, ""
	}
	return state, strconv.FormatFloat(v, 'g', -1, 64)
}

// wait waits for the tells under way.
func (s *searchSource) wait() { s.tells.wait() }

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

// searchChild is the child of block b that sets search:, nil when none does (the plan
// allows it only as a block's one child).
func searchChild(b *plan.Task) *plan.Task {
	if len(b.Parallel) == 1 && b.Parallel[0].Search != nil {
		return b.Parallel[0]
	}
	return nil
}
