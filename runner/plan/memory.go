package plan

import "github.com/runall/runall/runner/taskfile"

// HostSpec is what one trial asks of the container's host memory (memory:).
type HostSpec struct {
	Memory uint64 // bytes; 0 with Auto
	Auto   bool   // memory: auto: learn it from the peak of the group's first trial
	// Group is what memory: auto learns one need for: the trial's Group, or its block's
	// when the block sets memory: for its trials.
	Group string
}

// hostSpec is a trial's host memory need; nil when it sets none.
func hostSpec(mem *taskfile.HostMemory, group string) *HostSpec {
	if mem == nil {
		return nil
	}
	return &HostSpec{Memory: mem.Bytes, Auto: mem.Auto, Group: group}
}

// hasHostNeeds reports whether any task sets memory:.
func (p *Plan) hasHostNeeds() bool {
	var walk func([]*Task) bool
	walk = func(ts []*Task) bool {
		for _, t := range ts {
			if t.Host != nil || walk(t.Parallel) || walk(t.Steps) {
				return true
			}
		}
		return false
	}
	return walk(p.Tasks)
}

// NeedsHost reports whether any task asks for host memory admission (memory:).
func (p *Plan) NeedsHost() bool { return p.hasHostNeeds() }
