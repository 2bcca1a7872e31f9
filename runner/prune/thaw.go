package prune

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/results"
)

// Pauser pauses a running trial at its checkpoint and offers a paused one again: the run's
// (runner/pause.go), which method forecast's freeze-thaw is given.
type Pauser interface {
	// PauseAt pauses running trial t once its kept checkpoint holds step n; when no copy
	// lands, it is stopped with status otherwise.
	PauseAt(t *plan.Task, n int, reason string, otherwise results.Status) bool
	// Resume offers paused trial t again, to go on from its checkpoint.
	Resume(t *plan.Task) bool
	// End ends paused trial t for good with status, without running it again.
	End(t *plan.Task, status results.Status, reason string) bool
}

// chancer is a rule that tells a trial's chance now (forecast.Rule): a paused trial's is
// asked again before it resumes, as the incumbent may have moved while it waited.
type chancer interface {
	Chance(trial string) (float64, bool)
}

// thaw is the freeze-thaw of one block under method forecast with pause-below, after
// Swersky, Snoek and Adams' freeze-thaw Bayesian optimization (2014): a trial with a
// checkpoint whose chance of ending better than the incumbent lies between min-chance and
// pause-below is paused while trials wait to start, instead of run on; its slot goes to
// them. As slots free, the paused trial with the best chance resumes first if that chance
// is above a waiting trial's prior (1/(k+1) with k trials started: the chance that one more
// trial is the best of k+1 alike); once no trial waits (each trial of the block starts or
// is skipped: the scheduler's sources say so of every one), every paused trial resumes,
// the best chance first. Its chance is asked again as it is about to
// resume: one whose chance fell below min-chance while it waited (another trial raised the
// incumbent) ends pruned instead. A trial resumes once: it is not paused again
// (it may still be stopped). It lives on its block's goroutine alone.
type thaw struct {
	pauser  Pauser
	cfg     *earlystop.Config
	chance  chancer // nil: the chance a trial was paused at stands
	block   *plan.Task
	trialOf map[int]int            // each command's trial (its index in the block), by command ID
	started map[int]bool           // the trials that started or were skipped, by index
	pausing map[*plan.Task]float64 // asked to pause, with the chance they were paused at
	paused  map[*plan.Task]float64 // paused, with their chance
	thawed  map[*plan.Task]bool    // resumed once: never paused again
}

// newThaw is block's freeze-thaw; nil without a pauser, under another method, without a
// band to pause in, without a trial that keeps a checkpoint, or with trials a sampler makes
// as the run goes (search:), which the block cannot count as waiting.
func newThaw(block *plan.Task, c *earlystop.Config, p Pauser, rule earlystop.Rule) *thaw {
	if p == nil || block == nil || c.Method != earlystop.Forecast || c.PauseBelow <= c.MinChance {
		return nil
	}
	ch, _ := rule.(chancer)
	th := &thaw{pauser: p, cfg: c, chance: ch, block: block, trialOf: map[int]int{}, started: map[int]bool{},
		pausing: map[*plan.Task]float64{}, paused: map[*plan.Task]float64{}, thawed: map[*plan.Task]bool{}}
	kept := false
	for i, tr := range block.Parallel {
		if tr.Search != nil {
			return nil
		}
		kept = kept || tr.Checkpoint != nil
		plan.WalkCommands([]*plan.Task{tr}, func(cmd *plan.Task) { th.trialOf[cmd.ID] = i })
	}
	if !kept {
		return nil
	}
	return th
}

// event follows the block's trials as they start, pause and end, and as a slot frees (an
// end, a pause, a skip) resumes the paused ones the rule lets go on.
func (th *thaw) event(ev event.Event) {
	i, ok := th.trialOf[ev.Task.ID]
	if !ok {
		return
	}
	switch {
	case ev.Kind == event.TaskStarted:
		th.started[i] = true
		return // it took a slot: none is free for a paused trial
	case ev.Kind == event.TaskSkipped:
		th.started[i] = true
	case ev.Kind == event.TaskEnded:
		if chance, asked := th.pausing[ev.Task]; asked {
			delete(th.pausing, ev.Task)
			if ev.End == event.EndPause {
				th.paused[ev.Task] = chance
			}
		}
	}
	th.release()
}

// waiting reports whether a trial of the block has not started yet.
func (th *thaw) waiting() bool { return len(th.started) < len(th.block.Parallel) }

// release resumes the paused trials the rule lets go on now.
func (th *thaw) release() {
	if len(th.paused) == 0 {
		return
	}
	th.rechance()
	if len(th.paused) == 0 {
		return // every one ended: its chance fell below min-chance
	}
	order := slices.SortedFunc(maps.Keys(th.paused), func(a, b *plan.Task) int {
		return cmp.Or(cmp.Compare(th.paused[b], th.paused[a]), cmp.Compare(a.ID, b.ID))
	})
	if th.waiting() {
		prior := 1 / float64(len(th.started)+1)
		if th.paused[order[0]] <= prior {
			return
		}
		order = order[:1]
	}
	for _, t := range order {
		delete(th.paused, t)
		th.thawed[t] = true
		th.pauser.Resume(t)
	}
}

// rechance asks each paused trial's chance again, and ends those that fell below
// min-chance while they waited.
func (th *thaw) rechance() {
	if th.chance == nil {
		return
	}
	for _, t := range slices.SortedFunc(maps.Keys(th.paused), func(a, b *plan.Task) int { return cmp.Compare(a.ID, b.ID) }) {
		c, ok := th.chance.Chance(t.Key)
		if !ok {
			continue
		}
		th.paused[t] = c
		if c < th.cfg.MinChance {
			delete(th.paused, t)
			th.pauser.End(t, results.StatusPruned, fmt.Sprintf("forecast: %s: its chance %s of ending better than the best fell below min-chance %s while it was paused",
				th.cfg.Metric, num(c), num(th.cfg.MinChance)))
		}
	}
}

// pause pauses the trial of ev at its checkpoint when its chance f.Chance is below
// pause-below and trials wait for its slot; it reports whether it asked.
func (th *thaw) pause(ev event.Event, f *earlystop.ForecastFigures) bool {
	i, ok := th.trialOf[ev.Task.ID]
	if !ok || f.Chance >= th.cfg.PauseBelow || th.thawed[ev.Task] || !th.waiting() || th.block.Parallel[i].Checkpoint == nil {
		return false
	}
	if _, asked := th.pausing[ev.Task]; asked {
		return true
	}
	reason := fmt.Sprintf("forecast: %s at step %d: its chance %s of ending better than %s is below pause-below %s: paused at its checkpoint while other trials wait",
		th.cfg.Metric, f.Step, num(f.Chance), num(f.Incumbent), num(th.cfg.PauseBelow))
	if !th.pauser.PauseAt(ev.Task, ev.Step, reason, results.StatusPruned) {
		return false
	}
	th.pausing[ev.Task] = f.Chance
	return true
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
