package plan

import (
	"cmp"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/metric"
)

// inherited is what a parallel block passes to its children, and a trial to its steps.
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
	gpuMemory *gpuMemory
	gpus      int
	gpuCap    *bool
	// memory: a block's host memory need, and the group its trials learn an auto need in.
	hostMemory *hostMemory
	hostGroup  string
	timeout    time.Duration
	retries    *int
	// gpuGroup is the block's identity when its trials inherit its GPU need: they learn a
	// gpu-memory: auto need together, as one sweep.
	gpuGroup string
	// path and templatePath name the parent: its name path, with placeholders substituted
	// and as written. They make Task.Key and Task.Group.
	path, templatePath string
}

// applyArgs replaces $1..$n and $* in every cmd and name with the command line's extra
// arguments, as bashful does. $10 is replaced before $1 so that it is not read as $1 then 0.
func applyArgs(tasks []*rawTask, args []string) {
	if len(args) == 0 {
		return
	}
	pairs := []string{"$*", strings.Join(args, " ")}
	for i := len(args); i >= 1; i-- {
		pairs = append(pairs, "$"+strconv.Itoa(i), args[i-1])
	}
	r := strings.NewReplacer(pairs...) // at each position the first matching pair wins
	var walk func([]*rawTask)
	walk = func(ts []*rawTask) {
		for _, t := range ts {
			t.cmd, t.name = r.Replace(t.cmd), r.Replace(t.name)
			walk(t.parallel)
			walk(t.steps)
		}
	}
	walk(tasks)
}

// expandTasks builds plan tasks from raw ones: one copy per for-each item or matrix
// combination, each with its parent's inherited settings applied.
func (l *loader) expandTasks(list []*rawTask, in inherited, level int) []*Task {
	var out []*Task
	var named map[*rawTask]flagTrial
	if level == levelTrial {
		named = flagNames(list)
	}
	for _, rt := range list {
		copies := l.copies(rt)
		l.checkIdentical(rt, copies)
		for _, c := range copies {
			if ft, ok := named[rt]; ok {
				c.params = ft.params
				c.name = cmp.Or(ft.name, c.name)
			}
			l.checkName(c)
			out = append(out, l.task(c, in, level))
		}
	}
	return out
}

// copies expands for-each and matrix. Names are settled here, before substitution, so that
// an unnamed task is named by its substituted command.
func (l *loader) copies(t *rawTask) []*rawTask {
	name := l.defaultName(t)
	template := name + "\x00" + commandTemplate(t)
	switch {
	case len(t.forEach) > 0:
		var out []*rawTask
		param := strings.Trim(l.cfg.ReplicaReplacePattern, "<>")
		for _, item := range t.forEach {
			c := t.substituted(strings.NewReplacer(l.cfg.ReplicaReplacePattern, item))
			c.name = strings.ReplaceAll(name, l.cfg.ReplicaReplacePattern, item)
			c.params = []Param{{param, item}}
			c.template = template
			out = append(out, c)
		}
		return out
	case len(t.matrix) > 0 || len(t.sample) > 0:
		names := make([]string, 0, len(t.matrix)+len(t.sample))
		for _, a := range t.matrix {
			names = append(names, a.name)
		}
		for _, a := range t.sample {
			names = append(names, a.name)
		}
		named := false
		for _, n := range names {
			named = named || strings.Contains(name, "<"+n+">")
		}
		var out []*rawTask
		for _, combo := range paramRows(t) {
			var pairs, labels []string
			var params []Param
			for i, n := range names {
				pairs = append(pairs, "<"+n+">", combo[i])
				labels = append(labels, n+"="+combo[i])
				params = append(params, Param{n, combo[i]})
			}
			r := strings.NewReplacer(pairs...)
			c := t.substituted(r)
			c.name = r.Replace(name)
			c.params, c.template = params, template
			if !named {
				c.name += " [" + strings.Join(labels, " ") + "]"
			}
			out = append(out, c)
		}
		return out
	}
	c := *t
	c.name = name
	c.template = template
	return []*rawTask{&c}
}

// commandTemplate is what a task runs, as written: its cmd (or url), else its steps'.
func commandTemplate(t *rawTask) string {
	if t.cmd != "" || t.url != "" {
		return t.cmd + "\x00" + t.url
	}
	parts := make([]string, 0, len(t.steps)+len(t.parallel))
	for _, s := range slices.Concat(t.steps, t.parallel) {
		parts = append(parts, s.name+"\x00"+commandTemplate(s))
	}
	return strings.Join(parts, "\x00")
}

// paramRows are the values of a task's copies: each matrix combination with each sampled
// point, matrix keys first.
func paramRows(t *rawTask) [][]string {
	combos := combinations(t.matrix)
	if len(t.sample) == 0 {
		return combos
	}
	var out [][]string
	points := samplePoints(t.sample, t.trials, t.seed)
	for _, c := range combos {
		for _, p := range points {
			out = append(out, slices.Concat(c, p))
		}
	}
	return out
}

// combinations is the cartesian product of the matrix, the first key varying slowest.
func combinations(axes []matrixAxis) [][]string {
	combos := [][]string{nil}
	for _, a := range axes {
		var next [][]string
		for _, c := range combos {
			for _, v := range a.values {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	return combos
}

// defaultName is name:, else the command, else the script's file name, else the steps'.
func (l *loader) defaultName(t *rawTask) string {
	switch {
	case t.name != "":
		return t.name
	case t.cmd != "" && t.url != "":
		return strings.ReplaceAll(t.cmd, l.execPattern, urlBase(t.url))
	case t.cmd != "":
		return strings.TrimRight(t.cmd, "\n")
	case t.url != "":
		return urlBase(t.url)
	case len(t.steps) > 0:
		var names []string
		for _, s := range t.steps {
			names = append(names, l.defaultName(s))
		}
		return strings.Join(names, " && ")
	}
	return "parallel tasks"
}

func urlBase(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Path != "" {
		return path.Base(u.Path)
	}
	return path.Base(raw)
}

// substituted is a deep copy of t, its children and steps, with placeholders replaced in the
// fields a for-each or matrix value may appear in. for-each and matrix themselves are dropped
// from the copy (they have been expanded), but kept on the children, which expand later.
func (t *rawTask) substituted(r *strings.Replacer) *rawTask {
	c := t.substitutedFields(r)
	c.forEach, c.matrix, c.sample = nil, nil, nil
	return c
}

func (t *rawTask) substitutedFields(r *strings.Replacer) *rawTask {
	c := *t
	fill(r, c.placeholderTexts())
	c.parallel, c.steps = nil, nil
	for _, p := range t.parallel {
		c.parallel = append(c.parallel, p.substitutedFields(r))
	}
	for _, s := range t.steps {
		c.steps = append(c.steps, s.substitutedFields(r))
	}
	return &c
}

// task builds one plan task from an expanded raw task.
func (l *loader) task(c *rawTask, in inherited, level int) *Task {
	pos := l.pos(c.node)
	path := joinPath(in.path, c.name)
	templatePath := joinPath(in.templatePath, c.template)
	t := &Task{
		Name:          c.name,
		Cmd:           c.cmd,
		Cwd:           cmp.Or(c.cwd, in.cwd),
		Tags:          mergeTags(c.tags, in.tags),
		Env:           mergeEnv(in.env, c.env),
		Pos:           pos,
		Key:           identity(path, c.cmd, c.url),
		Group:         identity(templatePath),
		Params:        slices.Concat(in.params, c.params),
		Metrics:       cmp.Or(c.metrics, l.withParams(in.metrics, c.params)),
		IgnoreFailure: boolOr(c.ignoreFailure, l.cfg.IgnoreFailure),
		StopOnFailure: boolOr(c.stopOnFailure, boolOr(in.stopOnFailure, l.cfg.StopOnFailure)),
		ShowOutput:    boolOr(c.showOutput, l.cfg.ShowOutput),
		LogPath:       c.logPath,
		URL:           c.url,
		MD5:           strings.ToLower(c.md5),
		Sudo:          c.sudo,
	}
	for _, key := range []string{"url", "metrics", "cwd"} {
		if n := valueNode(c.node, key); n != nil {
			if t.KeyPos == nil {
				t.KeyPos = map[string]Pos{}
			}
			t.KeyPos[key] = l.pos(n)
		}
	}
	if c.url != "" && l.execPattern != "<exec>" {
		t.Cmd = strings.ReplaceAll(t.Cmd, l.execPattern, "<exec>")
	}
	for _, u := range c.upload {
		t.Upload = append(t.Upload, l.transfer(&u.rawTransfer))
	}
	t.MetricFormats = in.formats
	t.EarlyStop = in.earlyStop
	if c.recognizeMetrics != nil {
		t.MetricFormats.NoBuiltin = !*c.recognizeMetrics
	}
	if c.has("metric-pattern") {
		t.MetricFormats.Patterns = c.metricPatterns
	}
	if c.search != nil {
		t.Search = &Search{Ask: c.search.Ask, Tell: c.search.Tell, Trials: c.trials}
		if l.cfg.Objective == nil {
			l.problemAt(c, "search", "search: needs config objective: {metric, mode}: its value is what tell reports to the sampler")
		}
	}
	own := c.own(in)
	hostGroup := t.Group
	if c.hostMemory == nil && in.hostGroup != "" {
		hostGroup = in.hostGroup
	}
	if c.gpuMemory == nil && c.gpus == 0 && in.gpuGroup != "" {
		t.Group = in.gpuGroup
	}
	if len(c.parallel) > 0 {
		t.Order = cmp.Or(c.order, l.cfg.Order)
		if c.earlyStop != nil {
			t.EarlyStop = l.fillEarlyStop(c.earlyStop, c.keys["early-stop"])
		} else if l.cfgEarlyStop != nil {
			own := *l.cfgEarlyStop // a rule of its own: blocks' trials are not compared
			t.EarlyStop = &own
		}
		t.Parallel = l.expandTasks(c.parallel, inherited{
			tags: t.Tags, env: t.Env, stopOnFailure: c.stopOnFailure, cwd: t.Cwd, metrics: t.Metrics, params: t.Params, formats: t.MetricFormats, earlyStop: t.EarlyStop,
			gpuMemory: own.gpuMemory, gpus: own.gpus, gpuCap: own.gpuCap, timeout: own.timeout, retries: own.retries,
			gpuGroup: gpuGroupOf(own.gpuMemory, own.gpus, t.Group), path: path, templatePath: templatePath,
			hostMemory: own.hostMemory, hostGroup: hostGroupOf(c.hostMemory, hostGroup),
		}, levelTrial)
		return t
	}
	t.GPU = l.gpuSpec(c, own.gpuMemory, own.gpus, own.gpuCap)
	t.Host = hostSpec(own.hostMemory, hostGroup)
	t.Timeout = max(own.timeout, 0) // noTimeout is none
	if own.retries != nil {
		t.Retries = *own.retries
	}
	if len(c.steps) > 0 {
		stop := c.stopOnFailure
		if stop == nil {
			stop = in.stopOnFailure
		}
		t.Steps = l.expandTasks(c.steps, inherited{tags: t.Tags, env: t.Env, stopOnFailure: stop, cwd: t.Cwd,
			metrics: t.Metrics, params: t.Params, formats: t.MetricFormats, earlyStop: t.EarlyStop, path: path, templatePath: templatePath}, levelStep)
	}
	return t
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

// noTimeout is timeout: 0, which overrides a block's timeout with none: the zero value
// means "not set" and inherits.
const noTimeout time.Duration = -1

// own is what a task sets for itself or takes from its block: GPU needs, timeout, retries.
func (c *rawTask) own(in inherited) inherited {
	o := inherited{gpuMemory: c.gpuMemory, gpus: cmp.Or(c.gpus, in.gpus), gpuCap: c.gpuCap,
		timeout: cmp.Or(c.timeout, in.timeout), retries: c.retries, hostMemory: cmp.Or(c.hostMemory, in.hostMemory)}
	if o.gpuMemory == nil {
		o.gpuMemory = in.gpuMemory
	}
	if o.gpuCap == nil {
		o.gpuCap = in.gpuCap
	}
	if o.retries == nil {
		o.retries = in.retries
	}
	return o
}

// gpuGroupOf is the learning group a block hands its trials: its own identity when it sets a
// GPU need for them, "" otherwise.
func gpuGroupOf(mem *gpuMemory, gpus int, block string) string {
	if mem == nil && gpus == 0 {
		return ""
	}
	return block
}

// hostGroupOf is the learning group a block hands its trials for memory: auto: its own
// identity when it sets memory: for them, "" otherwise.
func hostGroupOf(mem *hostMemory, block string) string {
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

// gpuSpec is a trial's GPU need: gpu-memory (a size, or auto) on gpus devices. gpus alone
// means auto.
func (l *loader) gpuSpec(c *rawTask, mem *gpuMemory, gpus int, gpuCap *bool) *GPUSpec {
	capped := gpuCap != nil && *gpuCap
	if mem == nil && gpus == 0 {
		if capped {
			l.problemAt(c, "gpu-memory-cap", "gpu-memory-cap: needs gpu-memory set to a size")
		}
		return nil
	}
	s := &GPUSpec{Devices: max(gpus, 1), CapToNeed: capped}
	if mem == nil || mem.auto {
		s.Auto = true
		if capped {
			l.problemAt(c, "gpu-memory-cap", "gpu-memory-cap: needs gpu-memory set to a size, not auto")
		}
	} else {
		s.Memory = mem.bytes
	}
	return s
}

// problemAt records a problem at the task's key, or at the task when the key is inherited.
func (l *loader) problemAt(t *rawTask, key, msg string) {
	n := t.node
	if k, ok := t.keys[key]; ok {
		n = k
	}
	l.problems = append(l.problems, Problem{l.pos(n), msg})
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
