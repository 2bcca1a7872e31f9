package gpures

import (
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
)

// Learned reports learned GPU needs by the name of each group's first trial.
func Learned(p *plan.Plan, hist *history.History) map[string]uint64 {
	out := map[string]uint64{}
	seen := map[string]bool{}
	plan.Walk(p.Tasks, func(t *plan.Task) {
		if t.GPU == nil || !t.GPU.Auto || seen[t.Group] {
			return
		}
		seen[t.Group] = true
		if n, ok := hist.GPU().Learned(t.Group); ok {
			out[t.Name] = n
		}
	})
	if len(out) == 0 {
		return nil
	}
	return out
}
