package taskfile

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Sharing is gpu-sharing: what decides how many trials share a GPU.
type Sharing string

const (
	// SharingMemory packs trials onto a GPU while its memory holds them: the default.
	SharingMemory Sharing = "memory"
	// SharingProgress packs one more trial onto a GPU that has the memory only while the
	// last one admitted there raised the GPU's measured throughput (runner/sharing).
	SharingProgress Sharing = "progress"
)

// SharingSpec is a trial's gpu-sharing and where it was written. The zero value is the
// default: memory, written nowhere.
type SharingSpec struct {
	Mode Sharing // "": memory
	Pos  Pos
}

// SharingEntry is gpu-sharing: as written, on a task or in config.
type SharingEntry struct {
	Mode Sharing
	Node *yaml.Node // the value
}

// decodeSharing reads gpu-sharing: memory or progress.
func decodeSharing(d *Decoder, p Pair) *SharingEntry {
	if p.Value.Kind == yaml.ScalarNode && !isNull(p.Value) {
		switch m := Sharing(strings.TrimSpace(p.Value.Value)); m {
		case SharingMemory, SharingProgress:
			return &SharingEntry{Mode: m, Node: p.Value}
		}
	}
	d.Errorf(p.Value, "gpu-sharing: want memory (pack trials while a GPU's memory holds them: the default) "+
		"or progress (one more only while the last one raised the GPU's measured throughput), got %s", describeNode(p.Value))
	return nil
}
