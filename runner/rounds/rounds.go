// Package rounds is a run's early stopping by the rules that pause trials at their
// checkpoints and resume them (sha, hyperband, pbt: runner/earlystop/rounds.go): a consumer
// of the run's events. When a trial reports its value at its round's step, it is paused
// there once its checkpoint holds that step; once paused, its value goes on the block's
// board; once every trial of the round is on the board, the rule decides, and the trials
// are resumed (pbt: some from a copy of a better trial's checkpoint, with new values) or
// ended as pruned. The board is shared by every runall of a sweep (--claims), and each one
// acts on what it decides; what it asks of the run (pause, resume, end, copy) must be safe
// to ask twice.
//
//	metric at step ≥ Until ──▶ PauseAt(Until) ──▶ TaskEnded{EndPause} ──▶ board: value
//	  (its value at Until; paused at its next copy, or at its end's)          │
//	TaskEnded{EndFinal} ──▶ board: ended                                        │
//	           ┌────────────────────────────── decide (every trial there) ◀──┘
//	           ├─▶ pbt exploit: Copy(donor → trial), then Resume
//	           ├─▶ kept copy past the next round's step: its value there ──▶ board
//	           │   (no start), and decide again
//	           ├─▶ Resume (to the next round's step)
//	           └─▶ End as pruned (sha, hyperband)
package rounds

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Pauser is what the run gives the rule to pause, resume and end its trials. Each call may
// be made for a trial another runall paused (--claims), and again for one already resumed
// or ended: it is then a no-op.
type Pauser interface {
	// PauseAt pauses running trial t once its kept checkpoint holds step n or later; when
	// none does within the trial's wait, it is stopped with status otherwise instead.
	// False when t does not run here.
	PauseAt(t *plan.Task, n int, reason string, otherwise results.Status) bool
	// Resume offers t, paused at step n, to run again from its checkpoint.
	Resume(t *plan.Task, n int) bool
	// End ends t, paused at step n, for good with status, unrun.
	End(t *plan.Task, n int, status results.Status, reason string) bool
	// Copy makes a copy of from's kept checkpoint t's, as the exploit of round n (a no-op
	// when t's checkpoint already holds that exploit).
	Copy(ctx context.Context, from, t *plan.Task, n int) error
	// Kept is the step t's kept checkpoint holds, and t's values of metric by step up to
	// there as it keeps them; -1 when none is kept (or it cannot be read).
	Kept(ctx context.Context, t *plan.Task, metric string) (int, map[int]float64)
}

// Board is where a block's board is kept: in memory, or under the claims prefix.
type Board interface {
	// Load is the board: values by step, by trial; the trials that ended; pbt's copies made,
	// by "step/trial".
	Load(ctx context.Context) (values map[int]map[string]float64, ended, copied map[string]bool, err error)
	Value(ctx context.Context, step int, trial string, v float64) error
	Ended(ctx context.Context, trial string) error
	// TakeCopy reports whether this runall makes trial's copy at a pbt round (the first to
	// ask does); Copied says that it is made.
	TakeCopy(ctx context.Context, step int, trial string) (bool, error)
	Copied(ctx context.Context, step int, trial string) error
}

// Options configures the rule's consumer.
type Options struct {
	Pauser Pauser
	// Board is where each block's board is kept; nil, or a nil Board: in memory. say is how
	// the board tells what it cannot read: the block's notes, safe on the block's goroutine
	// (a line emitted from there could wait on the stream that waits for the block).
	Board func(block *plan.Task, say func(string)) (Board, error)
	// Poll is how often a shared board is read again for other runalls' values (0: only
	// when this runall's own trials report).
	Poll time.Duration
	// Key is a trial's identity on the board, the same on every runall (Task.Key when nil).
	Key func(*plan.Task) string
	// Drain bounds how long the run's end waits for the blocks to handle what they hold
	// (DefaultDrain when 0).
	Drain time.Duration
}

// DefaultDrain is how long the run's end waits for the blocks, as early stopping's waits
// for its values (runner/prune): a few hundred requests to a board that answers.
const DefaultDrain = 30 * time.Second

// Rounds is the consumer of every block whose early-stop rule pauses. Each block's work
// (board reads and writes, pauses) runs on a goroutine of its own, which takes the block's
// events from an event.Queue (the one inbox type of the stream's consumers) in the order
// they came, so that a remote board never holds up the run's events: past 4096 values
// queued, a trial's newest value replaces its one still queued (said), and its pauses and
// ends are always kept. What the blocks say goes to the Rounds' Notes, which the stream
// tells after its next event.
type Rounds struct {
	o      Options
	blocks map[*earlystop.Config]*block // by the rule its trials point to

	notes  event.Notes // what the blocks say, told by the stream
	mu     sync.Mutex
	wg     sync.WaitGroup
	closed bool
}

// New is the consumer of p's blocks whose early-stop rule pauses; nil when none has one.
func New(p *plan.Plan, o Options) (*Rounds, error) {
	r := &Rounds{o: o, blocks: map[*earlystop.Config]*block{}}
	for _, b := range p.Tasks {
		if !b.IsBlock() || b.EarlyStop == nil || !b.EarlyStop.Pauses() {
			continue
		}
		blk, err := newBlock(b, o, r.notes.Say)
		if err != nil {
			return nil, err
		}
		r.blocks[b.EarlyStop] = blk
	}
	if len(r.blocks) == 0 {
		return nil, nil
	}
	for _, blk := range r.blocks {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			blk.run(o.Poll)
		}()
	}
	return r, nil
}

// Event takes the metric values, pauses and ends of the blocks' trials to the blocks'
// goroutines.
func (r *Rounds) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind == event.RunEnded {
		r.finish()
		return
	}
	if ev.Task == nil || ev.Task.EarlyStop == nil {
		return
	}
	if blk := r.blocks[ev.Task.EarlyStop]; blk != nil && blk.roster.takes(ev, blk.cfg.Metric) {
		blk.in.push(ev)
	}
}

// Notes are what the blocks say: the stream tells them after each event.
func (r *Rounds) Notes() *event.Notes { return &r.notes }

// Variant is what trial t runs with now: pbt's values for it, and its lineage so far; t
// itself and no lineage under any other rule.
func (r *Rounds) Variant(t *plan.Task) (*plan.Task, []Exploit) {
	if t.EarlyStop == nil {
		return t, nil
	}
	blk := r.blocks[t.EarlyStop]
	if blk == nil || !blk.roster.has(t) {
		return t, nil
	}
	return blk.variant(t)
}

// finish is the run's last event: the process exits after it. Each block first handles
// what its inbox holds (a value put on its board, a round decided), or a shared sweep's
// other runalls would never see it; but a board that does not answer holds the end up only
// as long as Drain, and that is said.
func (r *Rounds) finish() {
	r.end()
	if drain := cmp.Or(r.o.Drain, DefaultDrain); !r.wait(drain) {
		r.notes.Say("early-stop: the rules that pause had not handled their trials' values and pauses after " + drain.String() +
			" (their board does not answer): the other runalls of the sweep will not see them")
	}
}

// Close ends the blocks' goroutines once they have done what they hold, and waits.
func (r *Rounds) Close() {
	r.end()
	r.wg.Wait()
}

// end has the blocks' goroutines end once they have done what they hold.
func (r *Rounds) end() {
	r.mu.Lock()
	closed := r.closed
	r.closed = true
	r.mu.Unlock()
	if !closed {
		for _, blk := range r.blocks {
			blk.in.close()
		}
	}
}

// wait waits up to d for the blocks' goroutines to end, and reports whether they did.
func (r *Rounds) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
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
