package rounds

import (
	"context"
	"fmt"
	"math"
	"strings"
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

// note is one thing a block's goroutine reacts to, in the order the run told them.
type note struct {
	kind   int
	t      *plan.Task
	step   int
	value  float64
	status results.Status // noteEnded: how it ended
}

const (
	noteValue  = iota // a value of the rule's metric
	notePaused        // its pause completed
	noteEnded         // it ended for good
)

// asked is a pause asked of a trial: the round's step, and its value there.
type asked struct {
	step  int
	value float64
}

// block is one block's rule, board and trials.
type block struct {
	b      *plan.Task
	cfg    earlystop.Config
	rule   *earlystop.Rounds
	board  Board
	pauser Pauser
	say    func(string)
	key    func(*plan.Task) string
	trials map[string]*plan.Task // by key

	mu      sync.Mutex
	settled *sync.Cond // broadcast as notes are handled
	pushed  int        // notes pushed so far
	handled int        // notes handled so far
	queue   []note
	wake    chan struct{}
	done    chan struct{}
	view    earlystop.Board        // the board as last read
	asked   map[*plan.Task]asked   // pauses asked and not completed
	acted   map[string]int         // the round each trial was last resumed or ended from, here
	given   map[*plan.Task]Exploit // exploits told, so that each is told once
}

func newBlock(b *plan.Task, o Options, say func(string)) (*block, error) {
	key := o.Key
	if key == nil {
		key = func(t *plan.Task) string { return t.Key }
	}
	blk := &block{b: b, cfg: *b.EarlyStop, pauser: o.Pauser, say: say, key: key, trials: map[string]*plan.Task{},
		wake: make(chan struct{}, 1), done: make(chan struct{}), asked: map[*plan.Task]asked{},
		acted: map[string]int{}, given: map[*plan.Task]Exploit{},
		view: earlystop.Board{Values: map[int]map[string]float64{}, Ended: map[string]bool{}}}
	blk.settled = sync.NewCond(&blk.mu)
	var members []earlystop.Member
	var space []earlystop.Axis
	for _, t := range b.Parallel {
		k := key(t)
		blk.trials[k] = t
		members = append(members, earlystop.Member{Key: k, Params: toRule(t.Params)})
		if t.Space != nil && space == nil {
			space = t.Space.EarlyStopAxes()
		}
	}
	var err error
	if blk.rule, err = earlystop.NewRounds(blk.cfg, key(b), members, space); err != nil {
		return nil, fmt.Errorf("block %s: %w", b.Name, err)
	}
	if o.Board != nil {
		if blk.board, err = o.Board(b); err != nil {
			return nil, fmt.Errorf("block %s: early-stop board: %w", b.Name, err)
		}
	}
	if blk.board == nil {
		blk.board = newMemBoard()
	}
	return blk, nil
}

func (blk *block) has(t *plan.Task) bool { return blk.trials[blk.key(t)] == t }

func (blk *block) push(n note) {
	blk.mu.Lock()
	blk.queue = append(blk.queue, n)
	blk.pushed++
	blk.mu.Unlock()
	select {
	case blk.wake <- struct{}{}:
	default:
	}
}

// settle waits until the notes pushed so far are handled.
func (blk *block) settle() {
	blk.mu.Lock()
	defer blk.mu.Unlock()
	for n := blk.pushed; blk.handled < n; {
		blk.settled.Wait()
	}
}

// close ends the block's goroutine once the notes pushed so far are handled.
func (blk *block) close() {
	blk.settle()
	close(blk.done)
}

// run reacts to the block's notes in order until close; with poll, it also reads the board
// again that often, for what other runalls put there.
func (blk *block) run(poll time.Duration) {
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	ctx := context.Background()
	for {
		blk.mu.Lock()
		batch := blk.queue
		blk.queue = nil
		blk.mu.Unlock()
		for _, n := range batch {
			blk.react(ctx, n)
		}
		if len(batch) > 0 {
			blk.act(ctx)
			blk.mu.Lock()
			blk.handled += len(batch)
			blk.settled.Broadcast()
			blk.mu.Unlock()
			continue
		}
		select {
		case <-blk.wake:
		case <-tick:
			blk.act(ctx)
		case <-blk.done:
			blk.mu.Lock()
			left := len(blk.queue)
			blk.mu.Unlock()
			if left == 0 {
				return
			}
		}
	}
}

// react takes one note: a value at the trial's round asks its pause; a completed pause puts
// the value on the board; an end says so there.
func (blk *block) react(ctx context.Context, n note) {
	k := blk.key(n.t)
	switch n.kind {
	case noteValue:
		if _, already := blk.asked[n.t]; already {
			return
		}
		a := blk.rule.Action(blk.view, k)
		if a.Do != earlystop.Run || a.Until > 0 && n.step >= a.Until {
			// Before a pause, and when a trial that runs seems to wait at a round or to be
			// out, the board is read again: as last read, it may be older than the decision
			// that resumed the trial (on another runall).
			blk.refresh(ctx)
			a = blk.rule.Action(blk.view, k)
		}
		if a.Do != earlystop.Run || a.Until == 0 || n.step < a.Until {
			return
		}
		blk.asked[n.t] = asked{a.Until, blk.usable(n.value)}
		reason := fmt.Sprintf("%s: paused at step %d for its round: %s %s", blk.cfg.Method, a.Until, blk.cfg.Metric, num(n.value))
		blk.pauser.PauseAt(n.t, a.Until, reason, results.StatusPruned)
	case notePaused, noteEnded:
		// A trial that ended on its own after its round's value (its last step) was there
		// too; one stopped instead of paused (its checkpoint never held the step) is out.
		if p, ok := blk.asked[n.t]; ok && (n.kind == notePaused || n.status == results.StatusOK) {
			blk.put(n.t, blk.board.Value(ctx, p.step, k, p.value))
		}
		delete(blk.asked, n.t)
		if n.kind == noteEnded {
			blk.put(n.t, blk.board.Ended(ctx, k))
		}
	}
}

// usable is a value the board can keep: a step with none (nan) is the worst there is.
func (blk *block) usable(v float64) float64 {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		return v
	}
	if blk.cfg.Mode == "min" {
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
	blk.mu.Lock()
	view := blk.view
	blk.mu.Unlock()
	ended := view.Ended
	for k, t := range blk.trials {
		step := lastStep(view, k)
		if step == 0 || ended[k] || blk.acted[k] >= step {
			continue
		}
		a := blk.rule.Action(view, k)
		switch {
		case a.Do == earlystop.Drop:
			blk.acted[k] = step
			blk.pauser.End(t, step, results.StatusPruned, a.Reason)
		case a.Do == earlystop.Run && a.Until != step:
			if a.From != nil && a.From.Step == step && !blk.exploit(ctx, t, a.From) {
				continue // the copy failed: tried again at the next reading
			}
			blk.acted[k] = step
			blk.pauser.Resume(t, step)
		}
	}
}

// refresh reads the board again; false when it cannot be read (said, and tried again later).
func (blk *block) refresh(ctx context.Context) bool {
	values, ended, err := blk.board.Load(ctx)
	if err != nil {
		blk.say("early-stop: read the board of " + blk.b.Name + ": " + err.Error() + " (trying again)")
		return false
	}
	blk.mu.Lock()
	blk.view = earlystop.Board{Values: values, Ended: ended}
	blk.mu.Unlock()
	return true
}

// exploit copies the donor's checkpoint for t, as pbt decided at e.Step, and says so.
func (blk *block) exploit(ctx context.Context, t *plan.Task, e *earlystop.Exploit) bool {
	donor := blk.trials[e.From]
	if err := blk.pauser.Copy(ctx, donor, t, e.Step); err != nil {
		blk.say(fmt.Sprintf("pbt: %s: copy the checkpoint of %s: %v (trying again)", t.Name, donor.Name, err))
		return false
	}
	blk.say(fmt.Sprintf("pbt: %s (%s %s at step %d) continues from %s's checkpoint with %s",
		t.Name, blk.cfg.Metric, num(e.Value), e.Step, donor.Name, paramsText(fromRule(e.Params))))
	return true
}

// variant is t with pbt's values for it, and its lineage.
func (blk *block) variant(t *plan.Task) (*plan.Task, []Exploit) {
	blk.mu.Lock()
	view := blk.view
	blk.mu.Unlock()
	k := blk.key(t)
	a := blk.rule.Action(view, k)
	var lineage []Exploit
	for _, e := range blk.rule.Lineage(view, k) {
		from := e.From
		if d := blk.trials[e.From]; d != nil {
			from = d.Name
		}
		lineage = append(lineage, Exploit{Step: e.Step, From: from, Value: e.Value, Params: fromRule(e.Params)})
	}
	if a.Params == nil || t.Space == nil {
		return t, lineage
	}
	return t.Variant(fromRule(a.Params)[len(t.Space.Template.Params):]), lineage
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

func toRule(ps []plan.Param) []earlystop.Param {
	out := make([]earlystop.Param, len(ps))
	for i, p := range ps {
		out[i] = earlystop.Param{Name: p.Name, Value: p.Value}
	}
	return out
}

func fromRule(ps []earlystop.Param) []plan.Param {
	out := make([]plan.Param, len(ps))
	for i, p := range ps {
		out[i] = plan.Param{Name: p.Name, Value: p.Value}
	}
	return out
}

func paramsText(ps []plan.Param) string {
	s := make([]string, 0, len(ps))
	for _, p := range ps {
		s = append(s, p.Name+"="+p.Value)
	}
	return strings.Join(s, " ")
}

func num(v float64) string { return fmt.Sprintf("%.4g", v) }
