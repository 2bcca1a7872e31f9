package plan

import (
	"strings"

	"github.com/runall/runall/size"
	"gopkg.in/yaml.v3"
)

// hostMemory is memory: what a trial takes of the container's host memory, or auto.
type hostMemory struct {
	bytes uint64
	auto  bool
}

// HostSpec is what one trial asks of the container's host memory (memory:).
type HostSpec struct {
	Memory uint64 // bytes; 0 with Auto
	Auto   bool   // memory: auto: learn it from the peak of the group's first trial
	// Group is what memory: auto learns one need for: the trial's Group, or its block's
	// when the block sets memory: for its trials.
	Group string
}

// DefaultHostMargin is kept free of the container's limit: 5% of it, at least 32 MiB, so
// that runall itself and the shells around trials always have room.
var DefaultHostMargin = Margin{Bytes: 32 << 20, Fraction: 0.05}

func decodeHostMemory(d *nodeDecoder, p nodePair) *hostMemory {
	if p.value.Kind == yaml.ScalarNode && !isNull(p.value) {
		if strings.EqualFold(strings.TrimSpace(p.value.Value), "auto") {
			return &hostMemory{auto: true}
		}
		b, err := size.Parse(p.value.Value)
		if err == nil && b > 0 {
			return &hostMemory{bytes: b}
		}
	}
	d.errorf(p.value, "memory: want the host memory a trial takes, such as 2GiB or 512MiB, or auto, got %s", describeNode(p.value))
	return nil
}

// hostSpec is a trial's host memory need; nil when it sets none.
func hostSpec(mem *hostMemory, group string) *HostSpec {
	if mem == nil {
		return nil
	}
	return &HostSpec{Memory: mem.bytes, Auto: mem.auto, Group: group}
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
