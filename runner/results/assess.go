package results

import (
	"cmp"
	"math"
	"slices"

	"github.com/runall/runall/runner/importance"
)

// AllObjectives are the run's objectives, the first first: Objectives, or Objective alone.
func (r *Run) AllObjectives() []Objective {
	switch {
	case len(r.Objectives) > 0:
		return r.Objectives
	case r.Objective != nil:
		return []Objective{*r.Objective}
	}
	return nil
}

// Assess ranks r's trials by its objectives: the best by the first (Best, BestID), each
// trial's Pareto front where there are several, and each parameter's importance for each.
// Every record of a run (a run's end, merged shards, a claims sweep) is assessed over all
// its trials.
func (r *Run) Assess() {
	r.SetBest()
	r.setParetoRanks()
	r.setImportance()
	r.countClasses()
}

// setParetoRanks sets each task's ParetoRank among those that succeeded with a finite value
// of every objective; none with fewer than two objectives.
func (r *Run) setParetoRanks() {
	objs := r.AllObjectives()
	var idx []int
	var points [][]float64
	for i := range r.Tasks {
		r.Tasks[i].ParetoRank = 0
		if p, ok := objectiveValues(objs, r.Tasks[i]); ok && len(objs) > 1 {
			idx, points = append(idx, i), append(points, p)
		}
	}
	lower := make([]bool, len(objs))
	for k, o := range objs {
		lower[k] = o.Mode == "min"
	}
	for n, rank := range paretoRanks(points, lower) {
		r.Tasks[idx[n]].ParetoRank = rank
	}
}

// objectiveValues are t's values of objs, where it succeeded and each is finite.
func objectiveValues(objs []Objective, t Task) ([]float64, bool) {
	if t.Status != StatusOK {
		return nil, false
	}
	out := make([]float64, len(objs))
	for k, o := range objs {
		v, ok := t.Metrics[o.Metric]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

// setImportance computes each objective's importances from the trials that succeeded with
// its value (as Optuna counts its complete trials); none where no task has params.
func (r *Run) setImportance() {
	r.Importance = nil
	if !slices.ContainsFunc(r.Tasks, func(t Task) bool { return len(t.Params) > 0 }) {
		return
	}
	log := map[string]bool{}
	for _, p := range r.LogParams {
		log[p] = true
	}
	for _, o := range r.AllObjectives() {
		var trials []importance.Trial
		for _, t := range r.Tasks {
			if v, ok := t.Metrics[o.Metric]; ok && t.Status == StatusOK && len(t.Params) > 0 {
				trials = append(trials, importance.Trial{Params: t.Params, Value: v})
			}
		}
		if r.Importance == nil {
			r.Importance = map[string]importance.Result{}
		}
		r.Importance[o.Metric] = importance.Evaluate(trials, o.Mode == "min", log)
	}
}

// Order is the order the summary and the report list r's tasks in: with several objectives,
// by Pareto front (the first first), each front best first by the first objective, then the
// tasks with no front as Objective.Rank puts them; with one, Objective.Rank.
func (r *Run) Order() []int {
	idx := r.Objective.Rank(r.Tasks)
	if len(r.AllObjectives()) < 2 {
		return idx
	}
	front := func(t Task) int {
		if t.ParetoRank == 0 {
			return math.MaxInt
		}
		return t.ParetoRank
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		return cmp.Compare(front(r.Tasks[i]), front(r.Tasks[j]))
	})
	return idx
}
