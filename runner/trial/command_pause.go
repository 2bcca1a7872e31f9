package trial

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// attemptPause is the Attempt a command hands its rooms: a pause asked of its trial goes
// through the trial's handle, as the run's pauser's does (executor.Running reaches the same
// handle): the stop awaited at the next step (pauseAtEnd reads it when the script ends on
// its own first), then the stop once the attempt's keeper holds a copy of that step.
type attemptPause struct {
	trial *plan.Task // the trial (a step's command pauses its trial); nil: it cannot pause
	h     *executor.Handle
	grace time.Duration // between SIGTERM and SIGKILL
	emit  func(event.Event)

	mu     sync.Mutex
	keeper *checkpoint.Keeper // the running attempt's; nil between attempts
	last   *checkpoint.Keeper // the last attempt's, also once it ended (Distrust)
}

// running tells which keeper keeps the attempt that runs now; nil: none runs.
func (a *attemptPause) running(k *checkpoint.Keeper) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keeper = k
	if k != nil {
		a.last = k
	}
}

// Distrust takes the trial back to the copy its last attempt's keeper kept before since.
func (a *attemptPause) Distrust(since time.Time) {
	a.mu.Lock()
	k := a.last
	a.mu.Unlock()
	if k == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k.Distrust(ctx, since)
}

// Pause stops the trial as paused once its keeper holds a copy past the one it holds now.
// With no copy within its checkpoint's wait it is said, and paused all the same, at the
// copy it last kept (or from its start).
func (a *attemptPause) Pause(reason string) bool {
	a.mu.Lock()
	k := a.keeper
	a.mu.Unlock()
	if k == nil || a.trial == nil || a.trial.Checkpoint == nil {
		return false
	}
	n := max(k.Landed()+1, 1)
	PauseWhenKept(a.trial, k, n, reason, results.StatusPaused, handleStop{a.h, a.grace}, func(line string) {
		a.emit(event.Event{Kind: event.RunStatus, Task: a.trial, Line: line})
	})
	return true
}

// handleStop stops a trial through its own handle.
type handleStop struct {
	h     *executor.Handle
	grace time.Duration
}

func (s handleStop) Await(a executor.Awaited)      { s.h.Await(a) }
func (s handleStop) Stop(st executor.Stop, _ bool) { s.h.Stop(st, s.grace) }

// PauseTarget is how PauseWhenKept reaches a running trial: the run's pauser through
// executor.Running, a room through the command's own handle.
type PauseTarget interface {
	Await(executor.Awaited)
	// Stop stops it as st; kept says whether the copy the pause waited for landed (st is
	// then the pause asked), or st is what it ends as without one.
	Stop(st executor.Stop, kept bool)
}

// PauseWhenKept asks running trial t to pause at step n: the stop is awaited at that step
// (so that a script that ends on its own first ends paused at the copy its end keeps), and
// given once keeper k holds a copy of step n or later. With no copy within its checkpoint's
// wait, why is said (NotPaused) and it ends as otherwise.
func PauseWhenKept(t *plan.Task, k *checkpoint.Keeper, n int, reason string, otherwise results.Status, s PauseTarget, say func(string)) {
	st := executor.Stop{Status: results.StatusPaused, Reason: reason}
	s.Await(executor.Awaited{Stop: st, At: n})
	go func() {
		if k.WaitFor(context.Background(), n, t.Checkpoint.Wait) {
			s.Stop(st, true)
			return
		}
		why := NotPaused(t, k, n, reason)
		say(t.Name + ": " + why)
		s.Stop(executor.Stop{Status: otherwise, Reason: why}, false)
	}()
}

// NotPaused says why trial t could not be paused at step n: no copy of its checkpoint was
// ever kept (its script saves nothing into it), its directory changed at step n or later
// but never held still to be copied, or it has not changed since an earlier step.
func NotPaused(t *plan.Task, k *checkpoint.Keeper, n int, reason string) string {
	switch changed := k.Changed(); {
	case k.Landed() < 0 && changed <= 0:
		return fmt.Sprintf("could not be paused at step %d: no checkpoint kept (nothing was saved into checkpoint %s within its wait, %v); %s",
			n, t.Checkpoint.Dir, t.Checkpoint.Wait, reason)
	case changed >= n:
		return fmt.Sprintf("could not be paused at step %d: checkpoint %s changed up to step %d but never held still to be copied within its wait, %v "+
			"(print runall-checkpoint step=N after each save, or keep logs out of it); %s", n, t.Checkpoint.Dir, changed, t.Checkpoint.Wait, reason)
	}
	return fmt.Sprintf("could not be paused: checkpoint %s has not changed since step %d, and pausing needs step %d (waited %v); %s",
		t.Checkpoint.Dir, k.Changed(), n, t.Checkpoint.Wait, reason)
}
