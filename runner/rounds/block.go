package rounds

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Exploit is one step of a pbt trial's lineage, by the trials' names.
type Exploit struct {
	Step   int          // the round's step
	From   string       // the trial whose checkpoint it continued from
	Value  float64      // its own value there, which put it in the bottom quantile
	Params []plan.Param // the values it went on with
}

// retryAct is how soon a resume or end the run refused is asked again, for at most
// retryFor after the trial paused.
const (
	retryAct = 200 * time.Millisecond
	retryFor = 10 * time.Second
)

// pausedAt is a trial's pause here: the round's step, and when it was through.
type pausedAt struct {
	step int
	at   time.Time
}

// asked is a pause asked of a trial: the round's step, and its value there.
type asked struct {
	step  int
	value float64
	held  bool // the board has its value already: it only waits there (taken over)
}

// block is one block's rule, board and trials.
type block struct {
	b      *plan.Task
	cfg    earlystop.Config
	rule   *earlystop.Rounds
	store  func() Board // the board, opened at its first use
	shared bool         // the board is other runalls' too
	pauser Pauser
	say    func(string)
	key    func(*plan.Task) string
	roster roster // its trials
	in     *inbox
	seen   *progress
}

// progress is what a block's goroutine knows of its trials; view is also read by Variant,
// on the trials' goroutines.
type progress struct {
	mu    sync.Mutex
	view  earlystop.Board      // the board as last read
	asked map[*plan.Task]asked // pauses asked and not completed
	acted map[string]int       // the round each trial was last resumed or ended from, here
	// here is each trial that paused here, until it runs or ends again: a resume or end of
	// one of these that the run refused (its pause not through yet) is asked again, for a
	// while (another runall may have resumed it meanwhile).
	here  map[*plan.Task]pausedAt
	again bool // an act to ask again soon
	// copied are pbt's copies made (by any runall), taken the ones this runall makes, both
	// by copyKey.
	copied, taken map[string]bool
	// rounds are the values each trial running here reported at its rounds' steps.
	rounds map[*plan.Task]map[int]float64
}

func newBlock(b *plan.Task, o Options, say func(string)) (*block, error) {
	key := o.Key
	if key == nil {
		key = func(t *plan.Task) string { return t.Key }
	}
	blk := &block{b: b, cfg: *b.EarlyStop, pauser: o.Pauser, say: say, key: key, in: newInbox(),
		roster: roster{key: key, trials: map[string]*plan.Task{}, steps: map[*plan.Task]*plan.Task{}},
		seen: &progress{asked: map[*plan.Task]asked{}, acted: map[string]int{}, here: map[*plan.Task]pausedAt{}, taken: map[string]bool{}, rounds: map[*plan.Task]map[int]float64{},
			view: earlystop.Board{Values: map[int]map[string]float64{}, Ended: map[string]bool{}}}}
	var members []earlystop.Member
	var space []earlystop.Axis
	for _, t := range b.Parallel {
		k := key(t)
		blk.roster.trials[k] = t
		for _, step := range t.Steps {
			blk.roster.steps[step] = t
		}
		members = append(members, earlystop.Member{Key: k, Params: toRule(t.Params)})
		if t.Space != nil && space == nil {
			space = t.Space.EarlyStopAxes()
		}
	}
	var err error
	// Seeded by the block's name, not its identity, which holds its trials' in their
	// written order: the same trials written in another order get the same brackets.
	if blk.rule, err = earlystop.NewRounds(blk.cfg, b.Name, members, space); err != nil {
		return nil, fmt.Errorf("block %s: %w", b.Name, err)
	}
	blk.store = sync.OnceValue(func() Board { return blk.open(o.Board) })
	blk.shared = o.Poll > 0
	return blk, nil
}

// open is the block's board, opened at its first use: a shared one lives under the claims,
// which are joined after the consumers are made. One that cannot be opened is said, and the
// board is kept here only.
func (blk *block) open(board func(*plan.Task, func(string)) (Board, error)) Board {
	var b Board
	var err error
	if board != nil {
		b, err = board(blk.b, blk.say)
	}
	if err != nil {
		blk.say(fmt.Sprintf("early-stop: %s: the board: %v: its rounds are decided with this runall's trials only", blk.b.Name, err))
	}
	if b == nil || err != nil {
		b = newMemBoard()
	}
	return b
}

// run reacts to the block's events in order until its inbox is closed and emptied; with
// poll, it also reads the board again that often, for what other runalls put there.
func (blk *block) run(poll time.Duration) {
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	ctx := context.Background()
	for {
		var retry <-chan time.Time
		if blk.seen.again {
			retry = time.After(retryAct)
		}
		select {
		case <-blk.in.q.Ready():
			evs, coalesced, last := blk.in.q.Take()
			for _, ev := range evs {
				blk.react(ctx, blk.roster.noteOf(ev))
			}
			if len(evs) > 0 {
				blk.act(ctx)
			}
			if coalesced > 0 {
				blk.coalesced(coalesced)
			}
			blk.in.handledN(len(evs) + coalesced)
			if last {
				return
			}
		case <-tick:
			blk.act(ctx)
		case <-retry:
			blk.act(ctx)
		}
	}
}

// react takes one note: a value at the trial's round asks its pause; a completed pause puts
// the value on the board; an end says so there.
func (blk *block) react(ctx context.Context, n note) {
	if n.kind == noteValue {
		blk.value(ctx, n)
		return
	}
	k := blk.key(n.t)
	p, asked := blk.seen.asked[n.t]
	delete(blk.seen.asked, n.t)
	delete(blk.seen.here, n.t)
	if asked && n.kind == notePaused {
		blk.seen.here[n.t] = pausedAt{p.step, time.Now()}
		delete(blk.seen.acted, k) // paused here: its round's decision is to be carried out here
	}
	// A trial that ended on its own after its round's value (its last step) was there
	// too; one stopped instead of paused (its checkpoint never held the step) is out.
	if asked && !p.held && (n.kind == notePaused || n.status == results.StatusOK) {
		blk.put(n.t, blk.store().Value(ctx, p.step, k, p.value))
	}
	if n.kind == noteEnded {
		delete(blk.seen.rounds, n.t)
		blk.put(n.t, blk.store().Ended(ctx, k))
	}
}

// value takes a value of the rule's metric: at or past the trial's round's step, it asks
// the trial's pause there, with its value at that step.
func (blk *block) value(ctx context.Context, n note) {
	k := blk.key(n.t)
	delete(blk.seen.here, n.t) // it runs
	if _, steps := blk.rule.Bracket(k); slices.Contains(steps, n.step) {
		if blk.seen.rounds[n.t] == nil {
			blk.seen.rounds[n.t] = map[int]float64{}
		}
		blk.seen.rounds[n.t][n.step] = n.value // what it compares at that round, even if it pauses later
	}
	if _, already := blk.seen.asked[n.t]; already {
		return
	}
	a := blk.rule.Action(blk.seen.snapshot(), k)
	if a.Do != earlystop.Run || a.Until > 0 && n.step >= a.Until {
		// Before a pause, and when a trial that runs seems to wait at a round or to be
		// out, the board is read again: as last read, it may be older than the decision
		// that resumed the trial (on another runall).
		blk.refresh(ctx)
		a = blk.rule.Action(blk.seen.snapshot(), k)
	}
	if a.Do != earlystop.Run {
		blk.hold(n.t, k, n.step, a)
		return
	}
	if a.Until == 0 || n.step < a.Until {
		return
	}
	v, ok := blk.seen.rounds[n.t][a.Until]
	if !ok {
		v = n.value // it resumed past the round's step elsewhere: its first value since
	}
	blk.seen.asked[n.t] = asked{step: a.Until, value: usable(blk.cfg.Mode, v)}
	reason := fmt.Sprintf("%s: its round at step %d: %s %s", blk.cfg.Method, a.Until, blk.cfg.Metric, num(v))
	blk.pauser.PauseAt(n.t, a.Until, reason, results.StatusPruned)
}

// hold pauses at once a trial that runs while the board has it waiting at its round, or
// out: another runall paused it and died, and this one took its claim over. Its value at
// the round is on the board already; once paused, its round's decision is carried out as
// for any trial paused there.
func (blk *block) hold(t *plan.Task, k string, step int, a earlystop.Action) {
	round := lastStep(blk.seen.snapshot(), k)
	blk.seen.asked[t] = asked{step: round, held: true}
	why := fmt.Sprintf("%s: it waits for its round at step %d (reported step %d)", blk.cfg.Method, round, step)
	if a.Do == earlystop.Drop {
		why = a.Reason
	}
	blk.pauser.PauseAt(t, step, why, results.StatusPruned)
}

// usable is a value the board can keep: a step with none (nan) is the worst there is
// under mode.
func usable(mode string, v float64) float64 {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		return v
	}
	if mode == "min" {
		return math.MaxFloat64
	}
	return -math.MaxFloat64
}

func (blk *block) put(t *plan.Task, err error) {
	if err != nil {
		blk.say(fmt.Sprintf("early-stop: %s: %v: its round waits for it", t.Name, err))
	}
}

// act reads the board and carries out what the rule decided for each trial that paused at
// a round: resume it (from a copy of a donor's checkpoint after a pbt exploit), or end it.
func (blk *block) act(ctx context.Context) {
	if !blk.refresh(ctx) {
		return
	}
	view := blk.seen.snapshot()
	ended := view.Ended
	blk.seen.again = false
	for k, t := range blk.roster.trials {
		step := lastStep(view, k)
		if step == 0 || ended[k] || blk.seen.acted[k] >= step {
			continue
		}
		a := blk.rule.Action(view, k)
		var done bool
		switch {
		case a.Do == earlystop.Drop:
			done = blk.pauser.End(t, step, results.StatusPruned, a.Reason)
		case a.Do == earlystop.Run && a.Until != step && blk.known(ctx, t, step, a):
			blk.seen.again = true // decided at its next round without a start: act again
			continue
		case a.Do == earlystop.Run && a.Until != step:
			if a.From != nil && a.From.Step == step && !blk.exploit(ctx, t, a.From) {
				blk.seen.again = true
				continue // the copy failed: tried again soon
			}
			done = blk.pauser.Resume(t, step)
		default:
			continue // its round is not decided yet
		}
		if h := blk.seen.here[t]; done || h.step != step || time.Since(h.at) > retryFor {
			// Refused elsewhere: another runall's trial, resumed or ended there already.
			blk.seen.acted[k] = step
			delete(blk.seen.here, t)
			continue
		}
		blk.seen.again = true // refused here: its pause is not through yet
	}
}

// refresh reads the board again; false when it cannot be read (said, and tried again later).
func (blk *block) refresh(ctx context.Context) bool {
	copied, ok := blk.reread(ctx)
	if ok {
		blk.seen.copied = copied
	}
	return ok
}

// reread reads the board again into the view, and returns pbt's copies made; false when it
// cannot be read. Safe on any goroutine.
func (blk *block) reread(ctx context.Context) (copied map[string]bool, ok bool) {
	values, ended, copied, err := blk.store().Load(ctx)
	if err != nil {
		blk.say("early-stop: read the board of " + blk.b.Name + ": " + err.Error() + " (trying again)")
		return nil, false
	}
	blk.seen.mu.Lock()
	blk.seen.view = earlystop.Board{Values: values, Ended: ended}
	blk.seen.mu.Unlock()
	return copied, true
}

// snapshot is the board as last read.
func (p *progress) snapshot() earlystop.Board {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.view
}

// lastStep is the last round's step the board holds a value of trial at; 0: none.
func lastStep(b earlystop.Board, trial string) int {
	last := 0
	for step, vs := range b.Values {
		if _, ok := vs[trial]; ok && step > last {
			last = step
		}
	}
	return last
}

// known puts on the board trial t's value at its next round's step (a.Until) when its kept
// checkpoint, paused at round step, holds that step already and that value: a resume would
// only pause it again at once (a start and an epoch thrown away). True when it did; t stays
// paused, at that round now. Not after a pbt exploit: the copy's values are the donor's.
func (blk *block) known(ctx context.Context, t *plan.Task, step int, a earlystop.Action) bool {
	if a.Until == 0 || a.From != nil && a.From.Step == step {
		return false
	}
	if h, here := blk.seen.here[t]; blk.shared && (!here || h.step != step) {
		return false // with claims, only a trial paused here: one elsewhere may be running
	}
	kept, values := blk.pauser.Kept(ctx, t, blk.cfg.Metric)
	v, ok := values[a.Until]
	if kept < a.Until || !ok {
		return false
	}
	k := blk.key(t)
	if err := blk.store().Value(ctx, a.Until, k, usable(blk.cfg.Mode, v)); err != nil {
		blk.put(t, err)
		return false
	}
	blk.seen.here[t] = pausedAt{a.Until, time.Now()}
	blk.say(fmt.Sprintf("%s: %s: its round at step %d is decided without a start: its kept checkpoint holds step %d (%s %s there)",
		blk.cfg.Method, t.Name, a.Until, kept, blk.cfg.Metric, num(v)))
	blk.refresh(ctx)
	return true
}
