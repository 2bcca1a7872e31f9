package plan

// Building plan tasks from the task file's tasks once for-each, matrix and sample have
// expanded them, and the settings each ends with. expandTasks, task and block call each
// other down the tree, so they stand together here; what a task inherits is inherit.go's,
// how it is copied expand.go's.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/taskfile"
)

// expandTasks builds plan tasks from the file's: one copy per for-each item or matrix
// combination, each with its parent's inherited settings applied.
func (l *loader) expandTasks(list []*taskfile.Task, in inherited, level int) []*Task {
	var out []*Task
	var named map[*taskfile.Task]flagTrial
	if level == levelTrial {
		named = flagNames(list)
	}
	for _, rt := range list {
		copies := l.copies(rt, in)
		l.src.checkIdentical(rt, copies, l.cfg.ReplicaReplacePattern)
		var space *Space
		pbt := in.earlyStop != nil && in.earlyStop.Method == earlystop.PBT
		if level == levelTrial && (pbt || onOOMOf(rt, in) != nil) && (len(rt.Matrix) > 0 || len(rt.Sample) > 0) {
			tmpl := *rt // the task as written: the template pbt's variants are filled from
			tmpl.Matrix, tmpl.Sample, tmpl.Name = nil, nil, l.defaultName(rt)
			seen := len(l.src.problems)
			t := l.task(&tmpl, in, level)
			l.src.problems = l.src.problems[:seen] // what the template would report, its copies report
			space = newSpace(rt, t)
			if err := spaceError(space); err != nil {
				l.src.problemAt(rt, "sample", "sample: "+err.Error())
			}
		}
		for i, c := range copies {
			if ft, ok := named[rt]; ok {
				c.Params = ft.params
				c.Name = cmp.Or(ft.name, c.Name)
			}
			l.src.checkName(c)
			t := l.task(c, in, level)
			t.Space = space
			if level == levelTrial {
				checkOnOOM(l.src, rt, t, onOOMOf(rt, in))
			}
			out = append(out, t)
			copies[i] = nil // built: the file's copy may go, so that the copies and the tasks are not all held at once
		}
	}
	return out
}

// task builds one plan task from an expanded task of the file.
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
	own := in.with(c)
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
			metrics: t.Metrics, params: t.Params, formats: t.MetricFormats, earlyStop: t.EarlyStop, faults: t.Faults, path: path, template: template}, levelStep)
	}
	t.Key = t.digest(path)
	return t
}

// keyPositions is where c's url, metrics and cwd are written, for problems with their
// ${VAR}s; nil when it sets none of them.
func (l *loader) keyPositions(c *taskfile.Task) map[string]Pos {
	var out map[string]Pos
	for _, key := range []string{"url", "metrics", "cwd", "log-path"} {
		if n := valueNode(c.Node, key); n != nil {
			if out == nil {
				out = map[string]Pos{}
			}
			out[key] = l.src.pos(n)
		}
	}
	return out
}

// adapt sets what t reads from its output and how its sweep adapts: metric formats, the
// early-stop rule it inherits, and search.
func (l *loader) adapt(t *Task, c *taskfile.Task, in inherited) {
	t.MetricFormats = in.formats
	t.EarlyStop, t.Faults = in.earlyStop, ownHang(in.faults, c, l.cfg)
	withOnOOM(t, c)
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
	t.Faults = faultsOf(c, l.cfg)
	t.Parallel = l.expandTasks(c.Parallel, inherited{
		tags: t.Tags, env: t.Env, stopOnFailure: c.StopOnFailure, cwd: t.Cwd, metrics: t.Metrics, params: t.Params, formats: t.MetricFormats, earlyStop: t.EarlyStop, faults: t.Faults,
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
// asynchronous early-stopping rule (asha, median, forecast), whose decisions depend on the
// order the trials reach a step (forecast's incumbent is whoever got there first); longest-first otherwise (the synchronous rules decide the same in
// any order, and longest-first packs the GPUs best).
func defaultOrder(rule *earlystop.Config) Order {
	if rule != nil && (rule.Method == earlystop.ASHA || rule.Method == earlystop.Median || rule.Method == earlystop.Forecast) {
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

func (src *sources) s3Spec(r *taskfile.S3Block) *S3Spec {
	s := &S3Spec{Endpoint: r.Endpoint, Region: r.Region, Pos: src.pos(r.Node)}
	for _, t := range r.Download {
		s.Download = append(s.Download, src.transfer(&t.TransferEntry))
	}
	for _, t := range r.Upload {
		s.Upload = append(s.Upload, src.transfer(&t.TransferEntry))
	}
	return s
}

func (src *sources) transfer(r *taskfile.TransferEntry) Transfer {
	t := r.Transfer
	t.Exclude = slices.Clone(t.Exclude)
	t.Pos = src.pos(r.Node)
	t.FromPos, t.ToPos = src.pos(r.At("from")), src.pos(r.At("to"))
	return t
}

// hostSpec is a trial's host memory need; nil when it sets none.
func hostSpec(mem *taskfile.HostMemory, group string) *HostSpec {
	if mem == nil {
		return nil
	}
	return &HostSpec{Memory: mem.Bytes, Auto: mem.Auto, Group: group}
}
