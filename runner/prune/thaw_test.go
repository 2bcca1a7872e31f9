package prune

import (
	"slices"
	"testing"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// pauser records what the freeze-thaw asks of it.
type pauser struct{ paused, resumed, ended []string }

func (p *pauser) PauseAt(t *plan.Task, _ int, _ string, _ results.Status) bool {
	p.paused = append(p.paused, t.Name)
	return true
}
func (p *pauser) Resume(t *plan.Task) bool { p.resumed = append(p.resumed, t.Name); return true }
func (p *pauser) End(t *plan.Task, _ results.Status, _ string) bool {
	p.ended = append(p.ended, t.Name)
	return true
}

// chances is a rule's chance of each trial now.
type chances map[string]float64

func (c chances) Observe(string, int, float64) (earlystop.Decision, error) {
	return earlystop.Decision{}, nil
}
func (c chances) Chance(trial string) (float64, bool) { v, ok := c[trial]; return v, ok }

func thawBlock(n int) (*plan.Task, *earlystop.Config) {
	c := &earlystop.Config{Method: earlystop.Forecast, Metric: "acc", Mode: "max", MinChance: 0.05, PauseBelow: 0.3}
	b := &plan.Task{Name: "sweep", EarlyStop: c}
	for i := range n {
		name := string(rune('a' + i))
		b.Parallel = append(b.Parallel, &plan.Task{ID: i + 1, Name: name, Key: name, Cmd: "train", EarlyStop: c, Checkpoint: &plan.Checkpoint{}})
	}
	return b, c
}

// thawRun is a freeze-thaw of a block of n trials (thawBlock), driven by hand: start and end
// tell it trial i's events, metric asks it about trial i's value at a step.
type thawRun struct {
	th *thaw
	tr []*plan.Task
	p  *pauser
	ch chances
}

func newThawRun(n int, set func(*earlystop.Config)) *thawRun {
	b, c := thawBlock(n)
	if set != nil {
		set(c)
	}
	r := &thawRun{tr: b.Parallel, p: &pauser{}, ch: chances{}}
	r.th = newThaw(b, c, r.p, r.ch)
	return r
}

func (r *thawRun) start(i int) { r.th.event(event.Event{Kind: event.TaskStarted, Task: r.tr[i]}) }
func (r *thawRun) end(i int, e event.End) {
	r.th.event(event.Event{Kind: event.TaskEnded, Task: r.tr[i], End: e})
}

// metric reports whether trial i is paused as it reaches value v at step with forecast f.
func (r *thawRun) metric(i, step int, v float64, f *earlystop.ForecastFigures) bool {
	return r.th.pause(event.Event{Kind: event.TaskMetric, Task: r.tr[i], Step: step, Value: v}, f)
}

// ask reports whether trial i is paused at step 3 with the given chance.
func (r *thawRun) ask(i int, chance float64) bool {
	return r.metric(i, 3, 0, &earlystop.ForecastFigures{Step: 3, Chance: chance, HasIncumbent: true})
}

// TestThaw: a trial with a chance in the band is paused while others wait, and not while
// none does; a paused trial resumes as a slot frees only when its chance is above a waiting
// trial's prior 1/(k+1); once none waits, the paused resume, best chance first, and one
// whose chance fell below min-chance meanwhile ends instead; a trial resumes once.
func TestThaw(t *testing.T) {
	r := newThawRun(5, nil)
	p, ch, start, end, ask := r.p, r.ch, r.start, r.end, r.ask
	start(0)
	start(1)
	if ask(0, 0.5) || !ask(1, 0.2) {
		t.Fatalf("paused %v: want b alone (0.2 is below pause-below 0.3, 0.5 is not)", p.paused)
	}
	ch["b"] = 0.2
	end(1, event.EndPause) // k = 2 started: a waiting trial's prior is 1/3, above b's 0.2
	start(2)
	start(3)
	ch["b"] = 0.26
	end(2, event.EndFinal) // k = 4: the prior is 1/5, below b's 0.26 now: b resumes
	if !slices.Equal(p.resumed, []string{"b"}) {
		t.Fatalf("resumed %v, want b once its chance beat the prior", p.resumed)
	}
	start(1) // b again: thawed, never paused again
	if ask(1, 0.1) || !ask(3, 0.1) {
		t.Fatalf("paused %v: want d, and not b twice", p.paused)
	}
	ch["d"] = 0.01
	end(3, event.EndPause)
	start(4) // e, the last: none waits
	if ask(4, 0.1) {
		t.Error("e paused while none waits")
	}
	end(0, event.EndFinal)
	if !slices.Equal(p.ended, []string{"d"}) || len(p.resumed) != 1 {
		t.Errorf("ended %v, resumed %v: want d ended (0.01, below min-chance), no more resumed", p.ended, p.resumed)
	}
}

// TestThawEndsWhatDidNotRise: once none waits, a paused trial whose chance did not rise
// above the one it was paused at ends pruned instead of resuming; one whose chance rose (a
// rival's forecast was withdrawn) resumes.
func TestThawEndsWhatDidNotRise(t *testing.T) {
	r := newThawRun(4, nil)
	p, ch, start, end, ask := r.p, r.ch, r.start, r.end, r.ask
	start(0)
	start(1)
	if !ask(0, 0.1) || !ask(1, 0.15) {
		t.Fatalf("paused %v: want a and b", p.paused)
	}
	ch["a"], ch["b"] = 0.1, 0.15
	end(0, event.EndPause)
	end(1, event.EndPause) // k = 2: the prior 1/3 is above both: they stay paused
	start(2)
	start(3) // none waits now
	ch["a"], ch["b"] = 0.12, 0.15
	end(2, event.EndFinal)
	if !slices.Equal(p.resumed, []string{"a"}) || !slices.Equal(p.ended, []string{"b"}) {
		t.Errorf("resumed %v, ended %v: want a resumed (0.1 rose to 0.12), b ended (0.15 stayed)", p.resumed, p.ended)
	}
}

// TestThawNone: no freeze-thaw without a trial that keeps a checkpoint, under another
// method, or with pause-below at min-chance.
func TestThawNone(t *testing.T) {
	b, c := thawBlock(2)
	for _, tr := range b.Parallel {
		tr.Checkpoint = nil
	}
	if newThaw(b, c, &pauser{}, chances{}) != nil {
		t.Error("a freeze-thaw without checkpoints")
	}
	b, c = thawBlock(2)
	c.PauseBelow = c.MinChance
	if newThaw(b, c, &pauser{}, chances{}) != nil {
		t.Error("a freeze-thaw with no band to pause in")
	}
	c.PauseBelow, c.Method = 0.3, earlystop.ASHA
	if newThaw(b, c, &pauser{}, chances{}) != nil {
		t.Error("a freeze-thaw under asha")
	}
}

// TestThawHoldsUncertainAtGrace: at grace, a trial with no informed forecast (none at all,
// or the references' prior alone) is paused while trials wait, whatever its chance, and
// stays paused while they wait; once none waits, one resumes per slot that frees, the best
// value at grace first, and one whose chance fell below min-chance meanwhile ends instead.
// A trial with an informed forecast at grace goes on.
func TestThawHoldsUncertainAtGrace(t *testing.T) {
	r := newThawRun(5, func(c *earlystop.Config) { c.Grace = 2 })
	p, ch, start, end := r.p, r.ch, r.start, r.end
	at := func(i int, v float64, f *earlystop.ForecastFigures) bool { return r.metric(i, 2, v, f) }
	for i := range 3 {
		start(i)
	}
	if !at(0, 0.3, nil) || !at(1, 0.6, &earlystop.ForecastFigures{Step: 2, Chance: 0.9, HasIncumbent: true}) || !at(2, 0.5, nil) {
		t.Fatalf("paused %v: want a, b and c held at grace", p.paused)
	}
	if at(3, 0.9, &earlystop.ForecastFigures{Step: 2, Chance: 0.9, HasIncumbent: true, Informed: true}) {
		t.Fatal("a trial with an informed forecast held at grace")
	}
	ch["c"] = 0.01
	end(0, event.EndPause)
	end(1, event.EndPause)
	end(2, event.EndPause)
	if len(p.resumed) != 0 {
		t.Fatalf("resumed %v while trials wait", p.resumed)
	}
	start(3)
	start(4) // none waits
	end(3, event.EndFinal)
	if !slices.Equal(p.resumed, []string{"b"}) || !slices.Equal(p.ended, []string{"c"}) {
		t.Fatalf("resumed %v, ended %v: want b (0.6 at grace) alone, c ended (0.01)", p.resumed, p.ended)
	}
	end(4, event.EndFinal)
	if !slices.Equal(p.resumed, []string{"b", "a"}) {
		t.Errorf("resumed %v: want a next, as the next slot freed", p.resumed)
	}
}

// TestThawHoldsLastStartedBesideHeld: a trial that reaches grace uninformed after the last
// trial started is held beside those held there, so that the best value at grace goes on
// first whatever order the trials started in; with none held, or with an informed forecast,
// it goes on.
func TestThawHoldsLastStartedBesideHeld(t *testing.T) {
	r := newThawRun(4, func(c *earlystop.Config) { c.Grace = 1 })
	p, start, end := r.p, r.start, r.end
	at := func(i int, v float64, f *earlystop.ForecastFigures) bool { return r.metric(i, 1, v, f) }
	start(0)
	start(1)
	if !at(0, 0.6, nil) || !at(1, 0.2, nil) {
		t.Fatalf("paused %v: want a and b held at grace while c and d wait", p.paused)
	}
	end(0, event.EndPause)
	end(1, event.EndPause)
	start(2)
	start(3) // none waits
	if !at(2, 0.4, nil) {
		t.Fatalf("paused %v: want c, started last, held beside a and b", p.paused)
	}
	if at(3, 0.1, &earlystop.ForecastFigures{Step: 1, Chance: 0.9, HasIncumbent: true, Informed: true}) {
		t.Fatal("a trial with an informed forecast held at grace")
	}
	end(2, event.EndPause)
	if !slices.Equal(p.resumed, []string{"a"}) {
		t.Fatalf("resumed %v: want a (0.6 at grace), not c (0.4), which started later", p.resumed)
	}
	end(0, event.EndFinal)
	end(3, event.EndFinal)
	if !slices.Equal(p.resumed, []string{"a", "c", "b"}) {
		t.Fatalf("resumed %v: want c then b as slots free", p.resumed)
	}
	alone := newThawRun(2, nil)
	alone.start(0)
	alone.start(1)
	if alone.metric(1, 1, 0.5, nil) {
		t.Error("held at grace with none waiting and none held")
	}
}
