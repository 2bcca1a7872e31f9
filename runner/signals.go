package runner

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/runall/runall/runner/proc"
)

// watchSignals turns SIGINT/SIGTERM into a graceful stop: no new task, SIGTERM to every
// running one (l's processes), SIGKILL after the grace period; a second signal kills at
// once, and a second SIGINT also gives up on the uploads (cancel) when there are any.
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
					life.say(fmt.Sprintf("received %s: stopping tasks (SIGKILL in %v)", proc.SignalName(sig), l.procs.Grace))
					l.procs.Table.Signal(syscall.SIGTERM, true)
					l.halt.first()
					killTimer = time.AfterFunc(l.procs.Grace, func() { l.procs.Table.Signal(syscall.SIGKILL, true) })
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
