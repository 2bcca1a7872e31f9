package runner

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/checkpoint"
	"github.com/runall/runall/runner/executor"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
)

// watchSignals turns SIGINT/SIGTERM into a graceful stop: no new task, SIGTERM to every
// running one (l's processes), SIGKILL after the grace period; a second signal kills at
// once, and a second SIGINT also gives up on the uploads (cancel) when there are any. With
// l.halt.checkpointFirst, a trial with checkpoint: is first given up to the grace period
// to keep one more copy, and is stopped once it has (or the wait is over).
func watchSignals(sigs <-chan os.Signal, life *lifecycle, l *launcher, uploads bool, cancel context.CancelFunc) (stop func()) {
	if sigs == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var killTimer *time.Timer
		for {
			select {
			case <-done:
				if killTimer != nil {
					killTimer.Stop()
				}
				return
			case s := <-sigs:
				sig, _ := s.(syscall.Signal)
				if life.interrupt(sig) {
					spared := l.checkpointFirst(life, done)
					life.say(fmt.Sprintf("received %s: stopping tasks (SIGKILL in %v)", proc.SignalName(sig), l.procs.Grace))
					l.procs.Table.SignalBut(syscall.SIGTERM, true, spared)
					l.halt.first()
					killTimer = time.AfterFunc(l.procs.Grace, func() { l.procs.Table.SignalBut(syscall.SIGKILL, true, spared) })
					continue
				}
				life.say(fmt.Sprintf("received %s again: killing tasks now", proc.SignalName(sig)))
				l.procs.Table.Signal(syscall.SIGKILL, true)
				l.halt.second() // and gives up on the final uploads
				if uploads && sig == syscall.SIGINT {
					cancel() // a second Ctrl-C also gives up on uploads
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// checkpointFirst, when asked for (--grace-checkpoint), lets each running trial with a
// checkpoint keep its next copy before it is stopped: it waits up to the grace period for a
// copy past the one kept now, then stops the trial (SIGTERM, SIGKILL after the grace
// period). It returns the process groups it stops itself, which the run-wide signal spares;
// a second signal kills them with the rest. Done ends the waits.
func (l *launcher) checkpointFirst(life *lifecycle, done <-chan struct{}) (spared func(pgid int) bool) {
	none := func(int) bool { return false }
	if !l.halt.checkpointFirst || l.ckpts == nil {
		return none
	}
	type waiting struct {
		t *plan.Task
		k *checkpoint.Keeper
		h *executor.Handle
		n int // the step of the copy it waits for
	}
	var ws []waiting
	seen := map[*executor.Handle]bool{}
	groups := map[int]bool{}
	for t, h := range l.procs.Running.Each() {
		k := l.ckpts.keeper(t)
		if k == nil || seen[h] {
			continue
		}
		seen[h] = true
		ws = append(ws, waiting{t, k, h, max(k.Landed()+1, 1)})
		for _, g := range h.Groups() {
			groups[g] = true
		}
	}
	if len(ws) == 0 {
		return none
	}
	life.say(fmt.Sprintf("waiting up to %v for the next checkpoint of %d trial(s) before stopping them (--grace-checkpoint)", l.procs.Grace, len(ws)))
	ctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(l.halt.final, cancel) // a second signal: no more waiting
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, w := range ws {
		go func() {
			if w.k.WaitFor(ctx, w.n, l.procs.Grace) {
				life.say(fmt.Sprintf("%s: checkpoint of step %d kept: stopping it", w.t.Name, w.k.Landed()))
			} else if ctx.Err() == nil {
				life.say(fmt.Sprintf("%s: no checkpoint past step %d within %v: stopping it at its last copy", w.t.Name, w.n-1, l.procs.Grace))
			}
			w.h.Terminate(l.procs.Grace)
		}()
	}
	return func(pgid int) bool { return groups[pgid] }
}
