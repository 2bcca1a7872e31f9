package plan

import (
	"cmp"
	"slices"
	"time"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
	"github.com/runall/runall/runner/taskfile"
)

// inherited is what a parallel block passes to its children, and a trial to its steps.
//
//limits:flat one field for each task key a child inherits from its block, copied by name
type inherited struct {
	tags          []string
	env           []EnvVar
	stopOnFailure *bool // the parent's explicit stop-on-failure, if any
	cwd           string
	metrics       string            // metrics: the parent's file, for children and steps that set none
	params        []Param           // the parent's for-each or matrix values
	formats       metric.Formats    // recognize-metrics and metric-pattern: the parent's
	earlyStop     *earlystop.Config // the block's early-stop, for its trials and their steps
	faults        *Faults           // the block's diverged-on and fail-fast, likewise
	// A block's GPU needs, timeout and retries are defaults for each of its trials.
	gpuMemory *taskfile.GPUMemory
	gpus      int
	gpuCap    *bool
	// gpuSharing is the block's gpu-sharing: (own.gpuSharing: the task's own, else its block's).
	gpuSharing *taskfile.SharingEntry
	gpuThreads int // gpu-threads: its share of the GPU's threads under MPS
	// memory: a block's host memory need, and the group its trials learn an auto need in.
	hostMemory *taskfile.HostMemory
	hostGroup  string
	timeout    time.Duration
	retries    *int
	// gpuGroup is the block's identity when its trials inherit its GPU need: they learn a
	// gpu-memory: auto need together, as one sweep.
	gpuGroup string
	// path and template name the parent: its name path with placeholders substituted, and
	// its template path (names and commands as written). They make Task.Key and Task.Group.
	path     string
	template *templatePath
}

// with is what task c sets for itself or takes from its block: GPU needs, timeout, retries.
func (in inherited) with(c *taskfile.Task) inherited {
	o := inherited{gpuMemory: c.GPUMemory, gpus: cmp.Or(c.GPUs, in.gpus), gpuCap: c.GPUCap, gpuThreads: cmp.Or(c.GPUThreads, in.gpuThreads),
		timeout: cmp.Or(c.Timeout, in.timeout), retries: c.Retries, hostMemory: cmp.Or(c.HostMemory, in.hostMemory)}
	if o.gpuMemory == nil {
		o.gpuMemory = in.gpuMemory
	}
	if o.gpuCap == nil {
		o.gpuCap = in.gpuCap
	}
	o.gpuSharing = cmp.Or(c.GPUSharing, in.gpuSharing)
	if o.retries == nil {
		o.retries = in.retries
	}
	return o
}

func boolOr(b *bool, fallback bool) bool {
	if b != nil {
		return *b
	}
	return fallback
}

// mergeTags is the task's own tags, then its parent's, once each.
func mergeTags(own, parent []string) []string {
	var out []string
	for _, t := range slices.Concat(own, parent) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// mergeEnv is the parent's variables, then the task's: a task's value replaces its parent's
// in place, a new name is added at the end.
func mergeEnv(parent, own []EnvVar) []EnvVar {
	out := slices.Clone(parent)
	for _, e := range own {
		if i := slices.IndexFunc(out, func(p EnvVar) bool { return p.Name == e.Name }); i >= 0 {
			out[i].Value = e.Value
		} else {
			out = append(out, e)
		}
	}
	return out
}
