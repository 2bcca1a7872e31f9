package taskfile

import (
	"strings"

	"github.com/runall/runall/size"
	"gopkg.in/yaml.v3"
)

// HostMemory is memory: what a trial takes of the container's host memory, or auto.
type HostMemory struct {
	Bytes uint64
	Auto  bool
}

// DefaultHostMargin is kept free of the container's limit: 5% of it, at least 32 MiB, so
// that runall itself and the shells around trials always have room.
var DefaultHostMargin = Margin{Bytes: 32 << 20, Fraction: 0.05}

func decodeHostMemory(d *Decoder, p Pair) *HostMemory {
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) {
		if strings.EqualFold(strings.TrimSpace(p.Value.Value), "auto") {
			return &HostMemory{Auto: true}
		}
		b, err := size.Parse(p.Value.Value)
		if err == nil && b > 0 {
			return &HostMemory{Bytes: b}
		}
	}
	d.Errorf(p.Value, "memory: want the host memory a trial takes, such as 2GiB or 512MiB, or auto, got %s", describeNode(p.Value))
	return nil
}
