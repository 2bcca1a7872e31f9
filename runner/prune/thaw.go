package prune

import (
	"cmp"
	"fmt"
	"maps"
	"math"
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

// incumbenter is a rule that tells the value a trial must beat now (forecast.Rule): a
// paused trial resumes once none waits only if that moved in its favour since its pause.
// A chance that rose while the value to beat stood still rose with the forecast's own
// figures (a reference that finished far from it widened the references' prior), which
// is no new case for the trial.
type incumbenter interface {
	Incumbent(trial string) (float64, bool)
}

// thaw is the freeze-thaw of one block under method forecast with pause-below, after
// Swersky, Snoek and Adams' freeze-thaw Bayesian optimization (2014): a trial with a
// checkpoint whose chance of ending better than the incumbent lies between min-chance and
// pause-below is paused while trials wait to start, instead of run on; its slot goes to
// them. As slots free, the paused trial with the best chance resumes first if that chance
// is above a waiting trial's prior (1/(k+1) with k trials started: the chance that one more
// trial is the best of k+1 alike); once no trial waits (each trial of the block starts or
// is skipped: the scheduler's sources say so of every one), a paused trial resumes only if
// its chance rose above the one it was paused at (the incumbent it was measured against
// fell: a rival's forecast was withdrawn or lowered), the best chance first; the others end
// pruned. A slot that frees is no evidence for a trial: freeze-thaw thaws the trial whose
// expected gain is highest (Swersky et al., section 3.3), and a paused trial's curve has not
// moved, so its case is no better than when it was paused; resuming it then is the grid's
// cost for a trial already judged unlikely to win (before, 9 pauses resumed and ran on).
// Its chance is asked again as it is about to resume: one whose chance fell below
// min-chance while it waited (another trial raised the incumbent) ends pruned. A trial
// resumes once: it is not paused again (it may still be stopped). It lives on its block's
// goroutine alone.
type thaw struct {
	pauser  Pauser
	cfg     *earlystop.Config
	chance  chancer // nil: the chance a trial was paused at stands
	block   *plan.Task
	trialOf map[int]int          // each command's trial (its index in the block), by command ID
	started map[int]bool         // the trials that started or were skipped, by index
	pausing map[*plan.Task]hold  // asked to pause
	paused  map[*plan.Task]*hold // paused
	thawed  map[*plan.Task]bool  // resumed once: never paused again
}

// hold is why a trial was paused: its chance now and the one it was paused at, its value
// then (higher better: what orders trials whose chance is not known yet), and whether it
// was held at grace for want of an informed forecast (uncertain) rather than for a low
// chance.
type hold struct {
	chance, at, value float64
	inc               float64 // the value to beat at its pause; NaN: none
	uncertain         bool
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
		pausing: map[*plan.Task]hold{}, paused: map[*plan.Task]*hold{}, thawed: map[*plan.Task]bool{}}
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
		if h, asked := th.pausing[ev.Task]; asked {
			delete(th.pausing, ev.Task)
			if ev.End == event.EndPause {
				th.paused[ev.Task] = &h
			}
		}
	}
	th.release()
}

// waiting reports whether a trial of the block has not started yet.
func (th *thaw) waiting() bool { return len(th.started) < len(th.block.Parallel) }

// holding reports whether a trial of the block is held (or being held) at grace for want of
// an informed forecast: one that reaches grace uninformed after the last trial started is
// held beside them, so that the most promising at grace goes on first whatever the order
// the trials started in (a trial started last ran on, however poor: the sweep's decisions
// followed the order it was written in).
func (th *thaw) holding() bool {
	for _, h := range th.paused {
		if h.uncertain {
			return true
		}
	}
	for _, h := range th.pausing {
		if h.uncertain {
			return true
		}
	}
	return false
}

// release resumes the paused trials the rule lets go on now, as a slot frees: while trials
// wait, the one with the best chance if it is above a waiting trial's prior and was not held
// for want of a forecast; once none waits, every one whose chance rose (the others end) and
// one of those held uncertain, the most promising first, so that each is decided against
// the references that finished meanwhile (rechance ends those that fall below min-chance
// without running them again).
func (th *thaw) release() {
	if len(th.paused) == 0 {
		return
	}
	th.rechance()
	order := slices.SortedFunc(maps.Keys(th.paused), th.before)
	if th.waiting() {
		order = slices.DeleteFunc(order, func(t *plan.Task) bool { return th.paused[t].uncertain })
		if len(order) == 0 || th.paused[order[0]].chance <= 1/float64(len(th.started)+1) {
			return
		}
		order = order[:1]
	}
	uncertain := 0
	for _, t := range order {
		h := th.paused[t]
		if h.uncertain {
			if uncertain++; uncertain > 1 {
				continue // one a slot
			}
		}
		delete(th.paused, t)
		if !th.waiting() && !h.uncertain && !th.rose(t, h) {
			th.pauser.End(t, results.StatusPruned, fmt.Sprintf("forecast: %s: its chance %s of ending better than the best did not rise above %s, the one it was paused at, and no trial waits for its slot",
				th.cfg.Metric, num(h.chance), num(h.at)))
			continue
		}
		th.thawed[t] = true
		th.pauser.Resume(t)
	}
}

// rose reports whether paused trial t's case is better now than at its pause: the value
// to beat moved in its favour, where the rule tells it; else its chance rose.
func (th *thaw) rose(t *plan.Task, h *hold) bool {
	ir, ok := th.chance.(incumbenter)
	if !ok || math.IsNaN(h.inc) {
		return h.chance > h.at
	}
	now, found := ir.Incumbent(t.Key)
	if !found {
		return true // nothing to beat any more
	}
	if th.cfg.Mode == "min" {
		return now > h.inc
	}
	return now < h.inc
}

// before orders paused trials: those paused for their chance first, the best chance
// first; then those held uncertain, the best value at grace first (their chances, from the
// references' prior alone, say little more).
func (th *thaw) before(a, b *plan.Task) int {
	ha, hb := th.paused[a], th.paused[b]
	switch {
	case ha.uncertain != hb.uncertain:
		if ha.uncertain {
			return 1
		}
		return -1
	case ha.uncertain:
		return cmp.Or(cmp.Compare(hb.value, ha.value), cmp.Compare(a.ID, b.ID))
	}
	return cmp.Or(cmp.Compare(hb.chance, ha.chance), cmp.Compare(a.ID, b.ID))
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
		th.paused[t].chance = c
		if c < th.cfg.MinChance {
			delete(th.paused, t)
			th.pauser.End(t, results.StatusPruned, fmt.Sprintf("forecast: %s: its chance %s of ending better than the best fell below min-chance %s while it was paused",
				th.cfg.Metric, num(c), num(th.cfg.MinChance)))
		}
	}
}

// pause pauses the trial of ev at its checkpoint while trials wait for its slot: when its
// chance f.Chance is below pause-below, or at grace when no forecast of it is informed by
// the references yet (f nil: none at all), so that every trial reaches grace before any
// runs on and the most promising run first, and become the references the others are
// judged by. At grace it is held so also once none waits while others are held there
// (holding). It reports whether it asked.
func (th *thaw) pause(ev event.Event, f *earlystop.ForecastFigures) bool {
	i, ok := th.trialOf[ev.Task.ID]
	if !ok || th.thawed[ev.Task] || th.block.Parallel[i].Checkpoint == nil {
		return false
	}
	h := hold{chance: 1, value: ev.Value, inc: math.NaN(), uncertain: ev.Step == max(th.cfg.Grace, 1) && (f == nil || !f.Informed)}
	if !th.waiting() && !(h.uncertain && th.holding()) {
		return false
	}
	if th.cfg.Mode == "min" {
		h.value = -ev.Value
	}
	if f != nil {
		h.chance = f.Chance
		if f.HasIncumbent {
			h.inc = f.Incumbent
		}
	}
	h.at = h.chance
	if !h.uncertain && (f == nil || !f.HasIncumbent || f.Chance >= th.cfg.PauseBelow) {
		return false
	}
	if _, asked := th.pausing[ev.Task]; asked {
		return true
	}
	reason := fmt.Sprintf("forecast: %s at step %d: no forecast of it is informed by a trial that finished yet: paused at its checkpoint at grace, to go on once every trial reached it, the most promising first",
		th.cfg.Metric, ev.Step)
	if !h.uncertain {
		reason = fmt.Sprintf("forecast: %s at step %d: its chance %s of ending better than %s is below pause-below %s: paused at its checkpoint while other trials wait",
			th.cfg.Metric, ev.Step, num(f.Chance), num(f.Incumbent), num(th.cfg.PauseBelow))
	}
	if !th.pauser.PauseAt(ev.Task, ev.Step, reason, results.StatusPruned) {
		return false
	}
	th.pausing[ev.Task] = h
	return true
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
