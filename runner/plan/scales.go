package plan

import (
	"slices"

	"github.com/runall/runall/runner/taskfile"
)

// logSampled lists the sample: keys drawn log-uniformly anywhere in the tasks, sorted: the
// report draws them on a logarithmic axis, as they were drawn.
func logSampled(tasks []*taskfile.Task) []string {
	var out []string
	var walk func([]*taskfile.Task)
	walk = func(ts []*taskfile.Task) {
		for _, t := range ts {
			for _, a := range t.Sample {
				if a.Dist.Kind == "loguniform" {
					out = append(out, a.Name)
				}
			}
			walk(t.Parallel)
			walk(t.Steps)
		}
	}
	walk(tasks)
	slices.Sort(out)
	return slices.Compact(out)
}
