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
	plan    *plan.Plan
	tmpl    *plan.Task
	sampler search.Sampler

	cmds    sync.Mutex // one sampler command at a time
	tells   tellCount
	asked   int
	nextID  int
	failed  bool
	numbers map[*plan.Task]int // each trial's number in the sampler
	mu      sync.Mutex         // numbers
}

// newSearchSource is the source of a block of plan p whose one child, tmpl, sets search:;
// the sampler runs in the run's environment, base.
func newSearchSource(life *lifecycle, p *plan.Plan, tmpl *plan.Task, base []string) *searchSource {
	return &searchSource{life: life, plan: p, tmpl: tmpl, numbers: map[*plan.Task]int{},
		sampler: search.Sampler{Spec: tmpl.Search, Dir: p.Dir, Env: slices.Clone(base)}}
}

// Next asks the sampler for as many trials as could start, up to trials: N in all. A
// sampler that fails or prints no trial fails the run with what it said; the trials
// already asked for run on.
func (s *searchSource) Next(ctx context.Context, want int) ([]*sched.Trial, bool) {
	if s.failed || s.asked >= s.tmpl.Search.Trials {
		return nil, false
	}
	s.tells.wait() // the sampler learns every result before it proposes
	var out []*sched.Trial
	for range min(want, s.tmpl.Search.Trials-s.asked) {
		if ctx.Err() != nil || s.life.halted() {
			return out, false
		}
		s.cmds.Lock()
		tr, err := s.sampler.Ask(ctx)
		s.cmds.Unlock()
		if err != nil {
			// The template fails with the sampler's error, in the summary and the results
			// beside the trials it made; those already asked for run on.
			s.failed = true
			s.life.failUnrunnable(s.tmpl, err.Error()+"; no more trials are asked for")
			return out, false
		}
		s.asked++
		t := s.tmpl.Instantiate(tr.Number, tr.Params)
		t.ID = s.newID()
		s.mu.Lock()
		s.numbers[t] = tr.Number
		s.mu.Unlock()
		out = append(out, &sched.Trial{Task: t})
	}
	return out, s.asked < s.tmpl.Search.Trials
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
	s.mu.Lock()
	number, ok := s.numbers[tr.Task]
	s.mu.Unlock()
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
