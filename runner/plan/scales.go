package plan

import "slices"

// logSampled lists the sample: keys drawn log-uniformly anywhere in the tasks, sorted: the
// report draws them on a logarithmic axis, as they were drawn.
func logSampled(tasks []*rawTask) []string {
	var out []string
	var walk func([]*rawTask)
	walk = func(ts []*rawTask) {
		for _, t := range ts {
			for _, a := range t.sample {
				if a.dist.Kind == "loguniform" {
					out = append(out, a.name)
				}
			}
			walk(t.parallel)
			walk(t.steps)
		}
	}
	walk(tasks)
	slices.Sort(out)
	return slices.Compact(out)
}
