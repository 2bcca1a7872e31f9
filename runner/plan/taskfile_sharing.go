package plan

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

// rawSharing is gpu-sharing: as written, on a task or in config.
type rawSharing struct {
	mode Sharing
	node *yaml.Node // the value
}

// decodeSharing reads gpu-sharing: memory or progress.
func decodeSharing(d *nodeDecoder, p nodePair) *rawSharing {
	if p.value.Kind == yaml.ScalarNode && !isNull(p.value) {
		switch m := Sharing(strings.TrimSpace(p.value.Value)); m {
		case SharingMemory, SharingProgress:
			return &rawSharing{mode: m, node: p.value}
		}
	}
	d.errorf(p.value, "gpu-sharing: want memory (pack trials while a GPU's memory holds them: the default) "+
		"or progress (one more only while the last one raised the GPU's measured throughput), got %s", describeNode(p.value))
	return nil
}

// configSharing fills in where config's gpu-sharing: was written.
func configSharing(src *sources, raw *rawFile, cfg *Config) {
	if raw.config == nil {
		return
	}
	if n := valueNode(raw.config.node, "gpu-sharing"); n != nil && cfg.GPUSharing.Mode != "" {
		cfg.GPUSharing.Pos = src.pos(n)
	}
}

// sharingOf is a trial's gpu-sharing: its own or its block's (own), else config's, else
// unset (memory).
func sharingOf(own *rawSharing, cfg Config, src *sources) SharingSpec {
	if own != nil {
		return SharingSpec{Mode: own.mode, Pos: src.pos(own.node)}
	}
	return cfg.GPUSharing
}

// blockSharing refuses gpu-sharing on a block none of whose trials needs a GPU: it would
// pack nothing.
func blockSharing(src *sources, t *Task, c *rawTask) {
	if c.gpuSharing == nil {
		return
	}
	for _, x := range t.Parallel {
		if x.GPU != nil {
			return
		}
	}
	src.problemAt(c, "gpu-sharing", "gpu-sharing: decides how trials share a GPU, but none of this block's trials sets gpu-memory or gpus: set one, or remove gpu-sharing")
}
