package gpures

import (
	"testing"
	"time"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
)

// askedAttempt is an attempt that keeps the pauses asked of it.
type askedAttempt struct{ asked []string }

func (a *askedAttempt) Pause(reason string) bool { a.asked = append(a.asked, reason); return true }
func (a *askedAttempt) Distrust(time.Time)       {}

// TestGPURoomPausesItsAttempt: the GPU room asks the attempt it was handed last for the
// pause gpu-sharing: progress asks of it; before any attempt began there is none to ask.
func TestGPURoomPausesItsAttempt(t *testing.T) {
	g := NewGPURoom(nil, &admit.Placement{}, &plan.Task{}, nil)
	if g.Pause("too early") {
		t.Error("paused before an attempt began")
	}
	first, second := &askedAttempt{}, &askedAttempt{}
	g.Begin(&event.Event{}, first)
	g.Begin(&event.Event{}, second)
	if !g.Pause("lowered its GPU") || len(first.asked) != 0 || len(second.asked) != 1 || second.asked[0] != "lowered its GPU" {
		t.Errorf("asked %q of the first attempt, %q of the second; want the second's only", first.asked, second.asked)
	}
}
