package runner

import (
	"context"
	"sync"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

// Pauser pauses running trials at their checkpoint and resumes them: what a rule that
// pauses (successive halving, hyperband, population-based training) is given.
type Pauser interface {
	// PauseAt pauses running trial t once its kept checkpoint holds step n or later: SIGTERM
	// to its processes, SIGKILL after --grace; it ends its turn paused (status paused), its
	// GPU and host room released at once. When no copy of step n lands within the trial's
	// checkpoint wait, its output and the summary say so and it is stopped with status
	// otherwise (pruned, say) instead. False when t does not run or has no checkpoint.
	PauseAt(t *plan.Task, n int, reason string, otherwise results.Status) bool
	// Resume offers paused trial t again; it restores its checkpoint when it starts. A trial
	// of a sweep shared by several runalls (--claims) is given back to the sweep, for
	// whichever runall has room first.
	Resume(t *plan.Task) bool
	// End ends paused trial t for good with status (pruned, say), without running it again.
	End(t *plan.Task, status results.Status, reason string) bool
	// Landed is the step trial t's running attempt has kept a copy of; -1 when none.
	Landed(t *plan.Task) int
}

// PauserUser is a consumer of Options.Consumers that pauses and resumes trials: openStream
// hands it the run's Pauser before the first event, when any trial has checkpoint:
// (without one, nothing can pause and it is handed none).
type PauserUser interface {
	UsePauser(p Pauser)
}

// pauser is the run's Pauser: it stops a trial as paused once its checkpoint holds the
// step asked, and keeps each paused trial with the source that offers it again.
type pauser struct {
	running *executor.Running
	ckpts   *checkpoints
	life    *lifecycle

	mu       sync.Mutex
	paused   map[*plan.Task]*resumable            // the source each paused trial waits in
	stopping map[*plan.Task]bool                  // asked to pause, not yet back in its source
	asked    map[*plan.Task]func(*resumable) bool // Resume or End asked of a trial on its way back
}

// newPauser is nil when no trial has a checkpoint: nothing can pause.
func newPauser(running *executor.Running, ckpts *checkpoints, life *lifecycle) *pauser {
	if ckpts == nil {
		return nil
	}
	return &pauser{running: running, ckpts: ckpts, life: life, paused: map[*plan.Task]*resumable{},
		stopping: map[*plan.Task]bool{}, asked: map[*plan.Task]func(*resumable) bool{}}
}

func (p *pauser) PauseAt(t *plan.Task, n int, reason string, otherwise results.Status) bool {
	k := p.ckpts.keeper(t)
	if k == nil {
		return false
	}
	// It reached the round's step: if it ends on its own before its copy lands, its end
	// is its pause (at the copy its end keeps), and the round decides it all the same.
	trial.PauseWhenKept(t, k, n, reason, otherwise, runningStop{p, t}, func(line string) {
		p.life.emit(event.Event{Kind: event.RunStatus, Task: t, Line: line})
	})
	return true
}

// runningStop is how the pauser stops trial t: through the run's executor.Running, marking
// a trial it pauses at a kept copy as one it is stopping.
type runningStop struct {
	p *pauser
	t *plan.Task
}

func (s runningStop) Await(a executor.Awaited) { s.p.running.Await(s.t, a) }

func (s runningStop) Stop(st executor.Stop, kept bool) {
	p, t := s.p, s.t
	if !kept {
		p.running.Stop(t, st.Status, st.Reason)
		return
	}
	p.mu.Lock()
	p.stopping[t] = true
	p.mu.Unlock()
	// Where it paused (the copy it resumes from, which may be past the step asked) is
	// said as it ends: its last copy is kept then.
	if !p.running.Stop(t, st.Status, st.Reason) {
		p.mu.Lock()
		delete(p.stopping, t)
		p.mu.Unlock()
	}
}

func (p *pauser) Landed(t *plan.Task) int {
	if k := p.ckpts.keeper(t); k != nil {
		return k.Landed()
	}
	return -1
}

func (p *pauser) Resume(t *plan.Task) bool {
	return p.settle(t, func(r *resumable) bool { return r.resume(t) })
}

func (p *pauser) End(t *plan.Task, status results.Status, reason string) bool {
	return p.settle(t, func(r *resumable) bool { return p.end(r, t, status, reason) })
}

// ResumeWhenBack resumes paused trial t once its pause has reached its source, or now if
// it has: gpu-sharing: progress puts a trial it paused back in line at once, to wait there
// for a GPU that takes it.
func (p *pauser) ResumeWhenBack(t *plan.Task) {
	p.mu.Lock()
	if p.paused[t] == nil {
		p.asked[t] = func(r *resumable) bool { return r.resume(t) }
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.Resume(t)
}

// settle does what was asked of paused trial t now, or once its pause has reached its
// source: a rule that reacts to the paused event asks before the trial is back there.
func (p *pauser) settle(t *plan.Task, do func(*resumable) bool) bool {
	p.mu.Lock()
	r := p.paused[t]
	if r == nil {
		defer p.mu.Unlock()
		if p.stopping[t] {
			p.asked[t] = do
			return true
		}
		return false
	}
	delete(p.paused, t)
	p.mu.Unlock()
	return do(r)
}

// arrived registers paused trial t with its source r, and does what was asked of it
// on its way.
func (p *pauser) arrived(t *plan.Task, r *resumable) {
	p.mu.Lock()
	delete(p.stopping, t)
	do := p.asked[t]
	delete(p.asked, t)
	if do == nil {
		p.paused[t] = r
	}
	p.mu.Unlock()
	if do != nil {
		do(r)
	}
}

// end ends paused trial t of source r for good. t stays among the paused until its end is
// recorded: a scheduler that asks the source meanwhile waits for it, instead of ending the
// run with t still paused.
func (p *pauser) end(r *resumable, t *plan.Task, status results.Status, reason string) bool {
	tr := r.trial(t)
	if tr == nil {
		return false
	}
	for _, c := range plan.Commands(t) {
		switch p.life.ledger.statusOf(c) {
		case results.StatusPaused:
			p.life.finish(c, status, -1, reason, nil)
		case results.StatusPending:
			p.life.skip(c, "not started: the trial was ended while paused: "+reason)
		}
	}
	r.Source.Ended(context.Background(), tr, sched.Outcome{End: event.EndFinal})
	r.forget(t)
	return true
}

// take is the source paused trial t waits in, no longer kept here; nil when t is not paused.
func (p *pauser) take(t *plan.Task) *resumable {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.paused[t]
	delete(p.paused, t)
	return r
}

// wrap makes a block's source keep its paused trials and offer them again on Resume.
func (p *pauser) wrap(src sched.Source) sched.Source {
	if p == nil {
		return src
	}
	ready := make(chan struct{})
	r := &resumable{Source: src, p: p, waiting: map[*plan.Task]*sched.Trial{}, ready: ready, seen: ready}
	if w, ok := src.(sched.Withdrawer); ok {
		return withdrawing{r, w}
	}
	return r
}

// done ends what a block's source still keeps paused once its scheduler returned: only a
// halted run returns with trials paused (the scheduler waits for them otherwise), and one
// that halted after their rounds' last look leaves none paused unsaid.
func (p *pauser) done(src sched.Source) {
	if r, ok := src.(interface{ dropPaused() }); ok && p != nil {
		r.dropPaused()
	}
}

// handing is a source shared by several runalls (claims): a paused trial that is to resume
// goes back to it, for whichever runall has room first, instead of waiting for room here.
type handing interface {
	HandOver(ctx context.Context, t *sched.Trial)
}

// withdrawing is a resumable source whose own source withdraws trials from the line.
type withdrawing struct {
	*resumable
	w sched.Withdrawer
}

func (s withdrawing) Withdrawn(ctx context.Context, waiting []*sched.Trial) []*sched.Trial {
	return s.w.Withdrawn(ctx, waiting)
}

// resumable is a block's source with its paused trials: they wait here, not in the
// scheduler's line, until the rule that paused them resumes or ends them.
type resumable struct {
	sched.Source
	p *pauser

	mu      sync.Mutex
	waiting map[*plan.Task]*sched.Trial // paused
	again   []*sched.Trial              // resumed, to be offered
	ready   chan struct{}               // closed when a trial is resumed or ended
	// seen is ready as Next last read the paused trials, and what Ready gives: the scheduler
	// asks Ready after Next, and a trial resumed or ended in between must still wake it.
	seen chan struct{}
}

// Next offers the resumed trials first, then the source's. More may come while a trial
// is paused (the scheduler asks again when one pauses), unless the run halted: then a
// paused trial is not resumed, and says so.
func (r *resumable) Next(ctx context.Context, want int) ([]*sched.Trial, bool) {
	r.mu.Lock()
	again, paused := r.again, len(r.waiting) > 0
	r.again, r.seen = nil, r.ready
	r.mu.Unlock()
	if len(again) > 0 {
		return again, true
	}
	ts, more := r.Source.Next(ctx, want)
	if r.p.life.halted() {
		r.dropPaused()
		return ts, more
	}
	return ts, more || paused
}

// Ready is the source's; with none (a fixed list), closed when a paused trial is resumed or
// ended. A source that polls (claims) offers a resumed trial at its next poll.
func (r *resumable) Ready() <-chan struct{} {
	if c := r.Source.Ready(); c != nil {
		return c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

// Ended keeps a paused trial here; the source is told of its end only.
func (r *resumable) Ended(ctx context.Context, t *sched.Trial, out sched.Outcome) {
	if out.End != event.EndPause {
		r.Source.Ended(ctx, t, out)
		return
	}
	r.mu.Lock()
	r.waiting[t.Task] = t
	r.mu.Unlock()
	if r.p.life.halted() {
		// The scheduler asks Next no more: a trial that paused once the run halted (a
		// failure, a signal) would be left paused at the end of a sweep that ended.
		r.dropPaused()
		return
	}
	r.p.arrived(t.Task, r)
}

// resume offers paused trial t again: here, or, from a source shared with other runalls, to
// whichever has room first.
func (r *resumable) resume(t *plan.Task) bool {
	r.mu.Lock()
	tr, ok := r.waiting[t]
	if !ok {
		r.mu.Unlock()
		return false
	}
	delete(r.waiting, t)
	h, hands := r.Source.(handing)
	if !hands {
		r.again = append(r.again, tr)
	}
	r.wakeLocked()
	r.mu.Unlock()
	if hands {
		h.HandOver(context.Background(), tr)
	}
	return true
}

// wakeLocked tells a scheduler waiting on Ready to ask Next again; r.mu is held.
func (r *resumable) wakeLocked() {
	close(r.ready)
	r.ready = make(chan struct{})
}

func (r *resumable) trial(t *plan.Task) *sched.Trial {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting[t]
}

// forget drops paused trial t, ended for good, and wakes a scheduler that may be waiting on
// Ready only because t was paused (Next said more): it learns that there is no more.
func (r *resumable) forget(t *plan.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.waiting, t)
	r.wakeLocked()
}

// dropPaused skips what a halted run will not resume: the paused, and the resumed that were
// not offered again.
func (r *resumable) dropPaused() {
	r.mu.Lock()
	waiting := r.waiting
	r.waiting = map[*plan.Task]*sched.Trial{}
	if r.p.life.halted() {
		for _, tr := range r.again {
			waiting[tr.Task] = tr
		}
		r.again = nil
	}
	r.mu.Unlock()
	for t := range waiting {
		r.p.take(t)
		for _, c := range plan.Commands(t) {
			if r.p.life.ledger.statusOf(c) == results.StatusPaused {
				r.p.life.finish(c, results.StatusStopped, -1, "paused at its checkpoint, not resumed: "+r.p.life.haltReason(), nil)
			}
		}
	}
}
