package results

import (
	"cmp"
	"slices"
)

// Objective is the metric a sweep is ranked by: higher is better with mode "max", lower
// with "min".
type Objective struct {
	Metric string `json:"metric"`
	Mode   string `json:"mode"`
}

// Value is the task's value of the objective's metric.
func (o *Objective) Value(t Task) (float64, bool) {
	if o == nil {
		return 0, false
	}
	v, ok := t.Metrics[o.Metric]
	return v, ok
}

// Compare is negative when a is better than b, positive when worse, 0 when equal.
func (o *Objective) Compare(a, b float64) int {
	if o.Mode == "min" {
		return cmp.Compare(a, b)
	}
	return cmp.Compare(b, a)
}

// Rank orders tasks for reading: those that reported the objective, the ones that
// succeeded before the others (failed, ignored, interrupted), each best first; then the others in their order.
// It returns indices into tasks.
func (o *Objective) Rank(tasks []Task) []int {
	idx := make([]int, len(tasks))
	for i := range idx {
		idx[i] = i
	}
	if o == nil {
		return idx
	}
	tier := func(t Task) int {
		_, has := o.Value(t)
		switch {
		case !has:
			return 2
		case t.Status == StatusOK:
			return 0
		}
		return 1
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := tasks[i], tasks[j]
		if c := cmp.Compare(tier(a), tier(b)); c != 0 || tier(a) == 2 {
			return c
		}
		va, _ := o.Value(a)
		vb, _ := o.Value(b)
		return o.Compare(va, vb)
	})
	return idx
}

// BestTask is the best task that succeeded and reported the objective; false when none did.
func (o *Objective) BestTask(tasks []Task) (Task, bool) {
	for _, i := range o.Rank(tasks) {
		t := tasks[i]
		if _, ok := o.Value(t); ok && t.Status == StatusOK {
			return t, true
		}
		break
	}
	return Task{}, false
}

// SetBest names the best task of r's by its objective (Best, BestID); none when no task that
// succeeded reported it.
func (r *Run) SetBest() {
	r.Best, r.BestID = "", 0
	if t, ok := r.Objective.BestTask(r.Tasks); ok {
		r.Best, r.BestID = t.Name, t.ID
	}
}

// IsBest reports whether t is the run's best task: by its ID, which no other task has (two
// trials may share a name); by its name in a results file written before best_id.
func (r *Run) IsBest(t Task) bool {
	if r.BestID != 0 {
		return t.ID == r.BestID
	}
	return r.Best != "" && t.Name == r.Best
}
