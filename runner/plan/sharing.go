package plan

import "github.com/runall/runall/runner/taskfile"

// configSharing fills in where config's gpu-sharing: and log-path: were written.
func configSharing(src *sources, raw *taskfile.File, cfg *Config) {
	if raw.Config == nil {
		return
	}
	if n := valueNode(raw.Config.Node, "gpu-sharing"); n != nil && cfg.GPUSharing.Mode != "" {
		cfg.GPUSharing.Pos = src.pos(n)
	}
	if n := valueNode(raw.Config.Node, "log-path"); n != nil {
		cfg.LogPathPos = src.pos(n) // where CheckVars names its ${VAR}s
	}
}

// sharingOf is a trial's gpu-sharing: its own or its block's (own), else config's, else
// unset (memory).
func sharingOf(own *taskfile.SharingEntry, cfg Config, src *sources) SharingSpec {
	if own != nil {
		return SharingSpec{Mode: own.Mode, Pos: src.pos(own.Node)}
	}
	return cfg.GPUSharing
}

// blockSharing refuses gpu-sharing on a block none of whose trials needs a GPU: it would
// pack nothing.
func blockSharing(src *sources, t *Task, c *taskfile.Task) {
	if c.GPUSharing == nil {
		return
	}
	for _, x := range t.Parallel {
		if x.GPU != nil {
			return
		}
	}
	src.problemAt(c, "gpu-sharing", "gpu-sharing: decides how trials share a GPU, but none of this block's trials sets gpu-memory or gpus: set one, or remove gpu-sharing")
}
