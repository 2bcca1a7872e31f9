package gpures

import (
	"fmt"

	"github.com/runall/runall/gpu/mps"
)

// An MPS control daemon a killed runall left behind that still serves clients (its trials,
// orphaned, still computing) keeps its GPU closed to this run's trials until they end: a
// trial placed there would be a client of a second server beside them, capped by a limit
// that does not count theirs. mps.Set.Reap stops the daemon once it has none.

// closeForLeftovers closes the GPU of each leftover daemon that still serves clients.
func (i *isolation) closeForLeftovers() {
	for _, l := range i.set.Waiting() {
		if l.Index >= 0 && l.Index < i.gpus {
			i.closed.Close(l.Index, leftoverWhy(l))
		}
	}
}

// leftoverWhy is why a trial waits for a leftover daemon's GPU.
func leftoverWhy(l mps.Leftover) string {
	return fmt.Sprintf("the MPS control daemon left by run pid %d, which is gone, still serves %d client(s): its MPS trials wait until they end",
		l.RunPID, l.Clients)
}

// reapLeftovers stops each leftover daemon whose clients have all ended and opens its GPU.
func (i *isolation) reapLeftovers() {
	if len(i.set.Waiting()) == 0 {
		return
	}
	stopped, err := i.set.Reap()
	for _, l := range stopped {
		if l.Index >= 0 && l.Index < i.gpus {
			i.closed.Open(l.Index)
		}
		i.say(fmt.Sprintf("gpu-isolation: mps: %s, has no clients left: stopped; its GPU takes trials", l.String()))
	}
	if err != nil {
		i.say("gpu-isolation: mps: " + err.Error())
	}
}
