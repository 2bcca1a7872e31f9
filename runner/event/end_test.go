package event

import (
	"slices"
	"testing"

	"github.com/runall/runall/runner/plan"
)

func TestEndString(t *testing.T) {
	for e, want := range map[End]string{EndNone: "none", EndRetry: "retry", EndRequeue: "requeue",
		EndPause: "pause", EndFinal: "final", EndFinal + 1: "end(?)"} {
		if got := e.String(); got != want {
			t.Errorf("End(%d).String() = %q, want %q", e, got, want)
		}
	}
}

// The stream decides by a TaskEnded's End where its task stands, as it did by the three
// flags: after a retry the task still runs (a skip is dropped), after a requeue or a pause
// it is pending again (a skip is taken), after a final end it has ended (a second final end
// is dropped); a TaskEnded that says no end is not sent at all.
func TestStreamDecidesByEnd(t *testing.T) {
	for _, tc := range []struct {
		end  End
		sent []bool // the TaskEnded, then a TaskSkipped, then a final TaskEnded
	}{
		{EndNone, []bool{false, false, true}},
		{EndRetry, []bool{true, false, true}},
		{EndRequeue, []bool{true, true, false}},
		{EndPause, []bool{true, true, false}},
		{EndFinal, []bool{true, false, false}},
	} {
		s, task := &Stream{}, &plan.Task{ID: 1}
		s.Emit(Event{Kind: TaskStarted, Task: task})
		got := []bool{
			s.Emit(Event{Kind: TaskEnded, Task: task, End: tc.end}),
			s.Emit(Event{Kind: TaskSkipped, Task: task}),
			s.Emit(Event{Kind: TaskEnded, Task: task, End: EndFinal}),
		}
		if !slices.Equal(got, tc.sent) {
			t.Errorf("%s: sent %v, want %v", tc.end, got, tc.sent)
		}
	}
}
