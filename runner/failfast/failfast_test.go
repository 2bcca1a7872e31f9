package failfast

import (
	"strings"
	"testing"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// TestWatch: three trials failed for good with one signature halt the run once, with the
// grouped error; a success, a metric or a failure that differs before the third disarms
// the block; a trial with stop-on-failure: true, or one pruned, is not counted.
func TestWatch(t *testing.T) {
	fail := func(sig string) event.Event {
		return event.Event{Kind: event.TaskEnded, End: event.EndFinal, Status: results.StatusFailed,
			Try: &results.Attempt{Class: "crashed", Signature: sig}, Detail: &event.Detail{StderrTail: []string{"ValueError: x"}}}
	}
	ok := event.Event{Kind: event.TaskEnded, End: event.EndFinal, Status: results.StatusOK}
	metric := event.Event{Kind: event.TaskMetric, Metric: "loss", Value: 1}
	pruned := event.Event{Kind: event.TaskEnded, End: event.EndFinal, Status: results.StatusPruned}
	for _, tc := range []struct {
		name   string
		events []event.Event
		stop   []bool // each event's trial's stop-on-failure
		halts  int
	}{
		{"alike", []event.Event{fail("a"), pruned, fail("a"), fail("a"), fail("a")}, nil, 1},
		{"a success first", []event.Event{fail("a"), ok, fail("a"), fail("a")}, nil, 0},
		{"a metric first", []event.Event{metric, fail("a"), fail("a"), fail("a")}, nil, 0},
		{"differing", []event.Event{fail("a"), fail("b"), fail("a"), fail("a")}, nil, 0},
		{"stop-on-failure", []event.Event{fail("a"), fail("a"), fail("a")}, []bool{false, true, false}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &plan.Faults{FailFast: 3}
			p := &plan.Plan{Tasks: []*plan.Task{{Name: "sweep", Faults: f, Parallel: []*plan.Task{{Name: "x", Faults: f}}}}}
			var whys []string
			w := New(p, func(why string) { whys = append(whys, why) })
			var said []string
			for i, ev := range tc.events {
				ev.Task = &plan.Task{Name: "t" + string(rune('1'+i)), Faults: f, StopOnFailure: i < len(tc.stop) && tc.stop[i]}
				w.Event(ev, func(s event.Event) { said = append(said, s.Line) })
			}
			if len(whys) != tc.halts {
				t.Fatalf("halted %d times, want %d: %q", len(whys), tc.halts, whys)
			}
			if tc.halts == 1 && (!strings.Contains(whys[0], "trials: t1, t3, t4") || !strings.Contains(whys[0], "signature: a") ||
				!strings.Contains(whys[0], "t1's last lines:\n    ValueError: x") || len(said) != strings.Count(whys[0], "\n")+1) {
				t.Errorf("the grouped error:\n%s\nsaid %q", whys[0], said)
			}
		})
	}
	if New(&plan.Plan{Tasks: []*plan.Task{{Name: "b", Faults: &plan.Faults{}, Parallel: []*plan.Task{{}}}}}, nil) != nil {
		t.Error("a watch where fail-fast is off")
	}
}
