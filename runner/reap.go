package runner

import (
	"time"

	"github.com/runall/runall/runner/proc"
)

// reapWhileRunning makes runall the subreaper of its tasks' orphans and collects those that
// exit while the run goes on; the returned func stops collecting.
func reapWhileRunning(procs *proc.Table) (stop func()) {
	proc.BecomeSubreaper()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				proc.ReapZombies(procs)
			}
		}
	}()
	return func() { close(done) }
}
