package plan

// Building plan tasks from the task file's tasks once for-each, matrix and sample have
// expanded them: what each inherits from its block, and the settings it ends with.

import (
	"cmp"
	"slices"
	"strings"
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

// task builds one plan task from an expanded raw task.
func (l *loader) task(c *taskfile.Task, in inherited, level int) *Task {
	path := joinPath(in.path, c.Name)
	template := &templatePath{parent: in.template, own: c.Template}
	t := &Task{
		Name:          c.Name,
		Cmd:           c.Cmd,
		Cwd:           cmp.Or(c.Cwd, in.cwd),
		Tags:          mergeTags(c.Tags, in.tags),
		Env:           mergeEnv(in.env, c.Env),
		Pos:           l.src.pos(c.Node),
		Group:         template.group(),
		Params:        slices.Concat(in.params, c.Params),
		Metrics:       cmp.Or(c.Metrics, l.withParams(in.metrics, c.Params)),
		IgnoreFailure: boolOr(c.IgnoreFailure, l.cfg.IgnoreFailure),
		StopOnFailure: boolOr(c.StopOnFailure, boolOr(in.stopOnFailure, l.cfg.StopOnFailure)),
		ShowOutput:    boolOr(c.ShowOutput, l.cfg.ShowOutput),
		LogPath:       c.LogPath,
		URL:           c.URL,
		MD5:           strings.ToLower(c.MD5),
		Sudo:          c.Sudo,
		KeyPos:        l.keyPositions(c),
	}
	if c.URL != "" && l.execPattern != "<exec>" {
		t.Cmd = strings.ReplaceAll(t.Cmd, l.execPattern, "<exec>")
	}
	for _, u := range c.Upload {
		t.Upload = append(t.Upload, l.src.transfer(&u.TransferEntry))
	}
	l.adapt(t, c, in)
	own := own(c, in)
	hostGroup := t.Group
	if c.HostMemory == nil && in.hostGroup != "" {
		hostGroup = in.hostGroup
	}
	if c.GPUMemory == nil && c.GPUs == 0 && in.gpuGroup != "" {
		t.Group = in.gpuGroup
	}
	if len(c.Parallel) > 0 {
		l.block(t, c, own, hostGroup, path, template)
		t.Key = t.digest(path)
		return t
	}
	t.GPU = l.gpuSpec(c, own)
	t.Checkpoint = l.src.checkpoint(c)
	t.Host = hostSpec(own.hostMemory, hostGroup)
	t.Timeout = max(own.timeout, 0) // taskfile.NoTimeout is none
	if own.retries != nil {
		t.Retries = *own.retries
	}
	if len(c.Steps) > 0 {
		stop := c.StopOnFailure
		if stop == nil {
			stop = in.stopOnFailure
		}
		t.Steps = l.expandTasks(c.Steps, inherited{tags: t.Tags, env: t.Env, stopOnFailure: stop, cwd: t.Cwd,
			metrics: t.Metrics, params: t.Params, formats: t.MetricFormats, earlyStop: t.EarlyStop, path: path, template: template}, levelStep)
	}
	t.Key = t.digest(path)
	return t
}

// keyPositions is where c's url, metrics and cwd are written, for problems with their
// ${VAR}s; nil when it sets none of them.
func (l *loader) keyPositions(c *taskfile.Task) map[string]Pos {
	var out map[string]Pos
	for _, key := range []string{"url", "metrics", "cwd"} {
		if n := valueNode(c.Node, key); n != nil {
			if out == nil {
				out = map[string]Pos{}
			}
			out[key] = l.src.pos(n)
		}
	}
	return out
}

// adapt sets what t reads from its output and how its sweep adapts: metric formats (and a
// block's metrics: file, named by its trials' sample: values: pathvalues.go), the early-stop
// rule it inherits, and search.
func (l *loader) adapt(t *Task, c *taskfile.Task, in inherited) {
	if c.Metrics == "" && c.Data > 0 {
		if err := checkPathValue(in.metrics, c.Params[len(c.Params)-c.Data:]); err != nil {
			l.src.problemAt(c, "sample", "sample: metrics: "+in.metrics+": "+err.Error())
		}
	}
	t.MetricFormats = in.formats
	t.EarlyStop = in.earlyStop
	if c.RecognizeMetrics != nil {
		t.MetricFormats.NoBuiltin = !*c.RecognizeMetrics
	}
	if c.Has("metric-pattern") {
		t.MetricFormats.Patterns = c.MetricPatterns
	}
	if c.Search != nil {
		t.Search = &Search{Ask: c.Search.Ask, Tell: c.Search.Tell, Trials: c.Trials, Timeout: c.Search.Timeout}
		if l.cfg.Objective == nil {
			l.src.problemAt(c, "search", "search: needs config objective: {metric, mode}: its value is what tell reports to the sampler")
		}
	}
}

// block makes t a parallel block: its order, its early-stop rule, and its trials, which
// inherit what it sets (own) and its GPU and host memory groups.
func (l *loader) block(t *Task, c *taskfile.Task, own inherited, hostGroup, path string, template *templatePath) {
	if c.EarlyStop != nil {
		t.EarlyStop = l.fillEarlyStop(c.EarlyStop, c.Keys["early-stop"])
	} else if l.cfgEarlyStop != nil {
		rule := *l.cfgEarlyStop // a rule of its own: blocks' trials are not compared
		t.EarlyStop = &rule
	}
	t.Order = cmp.Or(c.Order, l.cfg.Order, defaultOrder(t.EarlyStop))
	t.Parallel = l.expandTasks(c.Parallel, inherited{
		tags: t.Tags, env: t.Env, stopOnFailure: c.StopOnFailure, cwd: t.Cwd, metrics: t.Metrics, params: t.Params, formats: t.MetricFormats, earlyStop: t.EarlyStop,
		gpuMemory: own.gpuMemory, gpus: own.gpus, gpuCap: own.gpuCap, gpuSharing: own.gpuSharing, gpuThreads: own.gpuThreads, timeout: own.timeout, retries: own.retries,
		gpuGroup: gpuGroupOf(own.gpuMemory, own.gpus, t.Group), path: path, template: template,
		hostMemory: own.hostMemory, hostGroup: hostGroupOf(c.HostMemory, hostGroup),
	}, levelTrial)
	blockSharing(l.src, t, c)
	l.src.checkCheckpoints(t.Parallel)
	l.src.checkPausingRule(t, c.Keys["early-stop"])
	l.src.checkExplore(t, c.Keys["early-stop"])
}

// defaultOrder is a block's order when neither it nor config sets one: shuffled under an
// asynchronous early-stopping rule (asha, median), whose decisions depend on the order the
// trials reach a step; longest-first otherwise (the synchronous rules decide the same in
// any order, and longest-first packs the GPUs best).
func defaultOrder(rule *earlystop.Config) Order {
	if rule != nil && (rule.Method == earlystop.ASHA || rule.Method == earlystop.Median) {
		return OrderShuffled
	}
	return taskfile.OrderLongestFirst
}

// withParams replaces a copy's placeholders in what it inherits (a block's metrics: naming
// its trials' <lr>).
func (l *loader) withParams(s string, params []Param) string {
	if s == "" || len(params) == 0 {
		return s
	}
	var pairs []string
	for _, p := range params {
		pairs = append(pairs, "<"+p.Name+">", p.Value)
		if p.Name == strings.Trim(l.cfg.ReplicaReplacePattern, "<>") {
			pairs = append(pairs, l.cfg.ReplicaReplacePattern, p.Value)
		}
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// own is what a task sets for itself or takes from its block: GPU needs, timeout, retries.
func own(c *taskfile.Task, in inherited) inherited {
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

// gpuGroupOf is the learning group a block hands its trials: its own identity when it sets a
// GPU need for them, "" otherwise.
func gpuGroupOf(mem *taskfile.GPUMemory, gpus int, block string) string {
	if mem == nil && gpus == 0 {
		return ""
	}
	return block
}

// hostGroupOf is the learning group a block hands its trials for memory: auto: its own
// identity when it sets memory: for them, "" otherwise.
func hostGroupOf(mem *taskfile.HostMemory, block string) string {
	if mem == nil {
		return ""
	}
	return block
}

// joinPath is a task's name path: its parents' names and its own, "/"-separated.
func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// gpuSpec is a trial's GPU need: gpu-memory (a size, or auto) on gpus devices (gpus alone
// means auto), and how it shares a GPU (gpu-sharing).
func (l *loader) gpuSpec(c *taskfile.Task, own inherited) *GPUSpec {
	mem, gpus := own.gpuMemory, own.gpus
	capped := own.gpuCap != nil && *own.gpuCap
	if mem == nil && gpus == 0 {
		if capped {
			l.src.problemAt(c, "gpu-memory-cap", "gpu-memory-cap: needs gpu-memory set to a size")
		}
		if c.GPUSharing != nil {
			l.src.problemAt(c, "gpu-sharing", "gpu-sharing: decides how trials share a GPU, but this task sets neither gpu-memory nor gpus: set one, or remove gpu-sharing")
		}
		return nil
	}
	s := &GPUSpec{Devices: max(gpus, 1), CapToNeed: capped, Sharing: sharingOf(own.gpuSharing, l.cfg, l.src),
		Threads: own.gpuThreads}
	if mem == nil || mem.Auto {
		s.Auto = true
		if capped {
			l.src.problemAt(c, "gpu-memory-cap", "gpu-memory-cap: needs gpu-memory set to a size, not auto")
		}
	} else {
		s.Memory = mem.Bytes
	}
	return s
}

// problemAt records a problem at the task's key, or at the task when the key is inherited.
func (src *sources) problemAt(t *taskfile.Task, key, msg string) {
	n := t.Node
	if k, ok := t.Keys[key]; ok {
		n = k
	}
	src.problems = append(src.problems, Problem{Pos: src.pos(n), Msg: msg})
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
