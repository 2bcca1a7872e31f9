package plan

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"gopkg.in/yaml.v3"
)

// LoadOptions are the command line's say in how a task file becomes a plan.
type LoadOptions struct {
	Args []string // extra arguments: replace $1..$n and $* in cmd and name (only when there are some)
	Tags []string // keep only tasks whose tags (own or inherited) include one of these; empty: all
	Dir  string   // working directory: $include paths and Plan.Dir resolve against it; "": os.Getwd
	// MaxTasks overrides config: max-tasks, the most tasks the file may expand to; 0: the
	// file's setting, else DefaultMaxTasks.
	MaxTasks int
}

// Load reads, validates and expands a task file. A file with mistakes gives a *FileError
// listing every problem, sorted by position; an unreadable file gives the os error, wrapped.
func Load(path string, opts LoadOptions) (*Plan, error) {
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	l := &loader{src: &sources{path: path, fileOf: map[*yaml.Node]string{}}, opts: opts}
	raw, err := l.read(dir)
	if err != nil {
		return nil, err
	}
	return l.build(raw, dir)
}

// read parses the task file and what it includes, decodes it and checks each task's keys
// against where it stands.
func (l *loader) read(dir string) (*rawFile, error) {
	abs := l.src.path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, abs)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot read task file: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &FileError{Problems: []Problem{yamlSyntaxProblem(l.src.path, data, err)}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &FileError{Problems: []Problem{{Pos{File: l.src.path}, "the file is empty: want a mapping with a tasks: list"}}}
	}
	root := doc.Content[0]

	inc := &includer{dir: dir, fileOf: l.src.fileOf, files: []string{l.src.path}, d: &nodeDecoder{}}
	inc.splice(root, filepath.Clean(abs))
	l.src.files = inc.files
	l.src.problems = append(l.src.problems, inc.problems...)
	l.src.nodeProblems(inc.d.problems)
	if err := l.checkSize(root); err != nil {
		return nil, err
	}

	d0 := &nodeDecoder{}
	checkNUL(d0, root)
	l.src.nodeProblems(d0.problems)
	l.src.checkArgs(l.opts.Args)
	var raw rawFile
	l.src.absorb(raw.UnmarshalYAML(root))
	d := &nodeDecoder{}
	for _, t := range raw.tasks {
		checkTask(d, t, levelTop)
	}
	l.src.nodeProblems(d.problems)
	if err := l.src.fileError(); err != nil {
		return nil, err
	}
	return &raw, nil
}

// build makes the plan: the config with its defaults, the s3: block, and the tasks expanded
// (arguments, for-each, matrix, inheritance), filtered by tags and numbered.
func (l *loader) build(raw *rawFile, dir string) (*Plan, error) {
	plan := &Plan{File: l.src.path, Dir: dir, Config: DefaultConfig()}
	l.execPattern = "<exec>"
	if raw.config != nil {
		plan.Config, l.execPattern = raw.config.Config, raw.config.execPattern
		for _, w := range raw.config.warnings {
			plan.Warnings = append(plan.Warnings, Problem{l.src.pos(w.node), w.msg})
		}
	}
	if n := plan.Config.Notify; n != nil {
		if u := valueNode(valueNode(raw.config.node, "notify"), "url"); u != nil {
			n.Pos = l.src.pos(u)
		}
	}
	configSharing(l.src, raw, &plan.Config)
	l.cfg = plan.Config
	if raw.s3 != nil {
		plan.S3 = l.src.s3Spec(raw.s3)
	}
	if l.opts.MaxTasks > 0 {
		plan.Config.MaxTasks = l.opts.MaxTasks
	}
	if !l.checkExpansion(raw.tasks, plan.Config.MaxTasks) {
		return nil, l.src.fileError()
	}
	applyArgs(raw.tasks, l.opts.Args)
	if raw.config != nil && plan.Config.EarlyStop != nil {
		plan.Config.EarlyStop = l.fillEarlyStop(plan.Config.EarlyStop, raw.config.earlyStopAt)
		l.cfgEarlyStop = plan.Config.EarlyStop
	}
	plan.Tasks = l.expandTasks(raw.tasks, inherited{formats: plan.Config.MetricFormats}, levelTop)
	plan.LogParams = logSampled(raw.tasks)
	l.checkUnfilled(plan.Tasks, map[keyText]bool{})
	if err := l.src.fileError(); err != nil {
		return nil, err
	}
	if tags := l.opts.Tags; len(tags) > 0 {
		plan.Tasks, plan.Filtered = filterTags(plan.Tasks, tags), true
		if len(plan.Tasks) == 0 {
			plan.Warnings = append(plan.Warnings, Problem{Pos{File: l.src.path}, fmt.Sprintf("no task has any of the tags %s: nothing to run", strings.Join(tags, ","))})
		}
	}
	numberTasks(plan.Tasks)
	uniqueKeys(plan.Tasks)
	distinctNames(plan.Tasks)
	plan.Warnings = append(plan.Warnings, duplicateNames(plan.Tasks)...)
	return plan, nil
}

// checkSize refuses a tree that aliases make too large to decode, before decoding it.
func (l *loader) checkSize(root *yaml.Node) error {
	maxTasks := l.opts.MaxTasks
	if maxTasks <= 0 {
		maxTasks = peekMaxTasks(root)
	}
	budget := nodeBudget(maxTasks)
	if expandedSize(root, budget) <= budget {
		return nil
	}
	return &FileError{Problems: []Problem{{Pos{File: l.src.path}, fmt.Sprintf(
		"aliases (*name) expand this file to more than %d YAML nodes, the most max-tasks %d allows: repeat less through aliases, or raise max-tasks in config: (or --max-tasks)",
		budget, maxTasks)}}}
}

// loader carries what building a plan from one task file needs.
type loader struct {
	src          *sources // the task file and its includes, and the problems found in them
	opts         LoadOptions
	cfg          Config
	execPattern  string
	cfgEarlyStop *earlystop.Config // config early-stop, metric and mode filled in
}

// sources are the task file and the files it includes: where each node comes from, and the
// problems found in them so far, each at its file:line:col.
type sources struct {
	path     string                // the task file
	fileOf   map[*yaml.Node]string // nodes of included files → their file
	files    []string              // files in the order read, the task file first
	problems []Problem
}

// pos is where a node is: its file (the task file unless it was included), line and column.
func (src *sources) pos(n *yaml.Node) Pos {
	file, ok := src.fileOf[n]
	if !ok {
		file = src.path
	}
	return Pos{File: file, Line: n.Line, Column: n.Column}
}

func (src *sources) nodeProblems(ps nodeProblems) {
	for _, p := range ps {
		src.problems = append(src.problems, Problem{src.pos(p.node), p.msg})
	}
}

func (src *sources) absorb(err error) {
	d := &nodeDecoder{}
	d.absorb(err)
	src.nodeProblems(d.problems)
}

// fileError returns every problem so far, sorted by file (in the order read), line and
// column, once each: a task reached through two aliases is decoded twice.
func (src *sources) fileError() error {
	if len(src.problems) == 0 {
		return nil
	}
	rank := func(file string) int {
		if i := slices.Index(src.files, file); i >= 0 {
			return i
		}
		return len(src.files)
	}
	ps := slices.Clone(src.problems)
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(rank(a.Pos.File), rank(b.Pos.File)),
			cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column), cmp.Compare(a.Msg, b.Msg))
	})
	return &FileError{Problems: slices.Compact(ps)}
}

// Where a task stands decides which keys it may have.
const (
	levelTop   = iota // an entry of the top-level tasks: list
	levelTrial        // a child of parallel-tasks:
	levelStep         // an entry of a trial's own tasks:
)

var gpuKeys = []string{"gpu-memory", "gpus", "gpu-memory-cap", "gpu-sharing", "gpu-threads"}

// checkTask reports what a task may not have where it stands, and combinations that make no
// sense. Types were checked when decoding.
func checkTask(d *nodeDecoder, t *rawTask, level int) {
	if t.node == nil || t.keys == nil { // not a mapping: already reported
		return
	}
	label := "this task"
	if t.name != "" {
		label = fmt.Sprintf("task %q", t.name)
	}
	if t.cmd == "" && t.url == "" && !t.has("parallel-tasks") && !t.has("tasks") && !t.unknownKeys {
		switch level {
		case levelTop:
			d.errorf(t.node, "%s has nothing to run: give it cmd, url or parallel-tasks", label)
		case levelTrial:
			d.errorf(t.node, "%s has nothing to run: give it cmd, url, or tasks (a trial's steps)", label)
		default:
			d.errorf(t.node, "%s has nothing to run: give it cmd or url", label)
		}
	}
	checkNesting(d, t, level)
	if t.md5 != "" && t.url == "" {
		d.errorf(t.keys["md5"], "md5: checks the script downloaded from url, but this task has no url")
	}
	if t.gpuCap != nil && *t.gpuCap && t.gpuMemory != nil && t.gpuMemory.auto {
		d.errorf(t.keys["gpu-memory-cap"], "gpu-memory-cap: needs gpu-memory set to a size, not auto")
	}
	checkAdaptKeys(d, t, level)
	if t.has("for-each") && t.has("matrix") {
		d.errorf(t.keys["matrix"], "matrix: cannot be combined with for-each on one task: make the for-each values one more matrix key")
	}
	for _, c := range t.parallel {
		checkTask(d, c, levelTrial)
	}
	for _, s := range t.steps {
		checkTask(d, s, levelStep)
	}
}

// checkNesting reports commands beside children or steps, and lists nested where they may
// not be.
func checkNesting(d *nodeDecoder, t *rawTask, level int) {
	for _, key := range []string{"cmd", "url"} {
		switch {
		case !t.has(key) || (key == "cmd" && t.cmd == "") || (key == "url" && t.url == ""):
		case t.has("parallel-tasks"):
			d.errorf(t.keys[key], "%s: a task with parallel-tasks only runs its children; move %s into a task of its own", key, key)
		case t.has("tasks"):
			d.errorf(t.keys[key], "%s: a task with tasks (steps) only runs its steps; make %s one of the steps", key, key)
		}
	}
	if t.has("order") && !t.has("parallel-tasks") {
		d.errorf(t.keys["order"], "order: orders the trials of a block; set it on the task with parallel-tasks, or in config:")
	}
	if t.has("parallel-tasks") {
		if level != levelTop {
			d.errorf(t.keys["parallel-tasks"], "parallel-tasks: cannot be nested: a parallel child runs a command, or its own steps with tasks:")
		}
		if t.has("tasks") {
			d.errorf(t.keys["tasks"], "tasks: a task cannot have both parallel-tasks and tasks")
		}
	}
	if t.has("tasks") {
		switch level {
		case levelTop:
			d.errorf(t.keys["tasks"], "tasks: only a child of parallel-tasks can have its own steps; list these at the top level, or wrap the task in parallel-tasks to make it a trial")
		case levelStep:
			d.errorf(t.keys["tasks"], "tasks: a step cannot have steps of its own")
		}
	}
	if t.has("checkpoint") && level != levelTrial {
		d.errorf(t.keys["checkpoint"], "checkpoint: is a trial's: set it on a child of parallel-tasks (placeholders such as ckpt/<lr> give each trial its own)")
	}
	if level == levelStep {
		for _, k := range gpuKeys {
			if t.has(k) {
				d.errorf(t.keys[k], "%s: set GPU needs on the trial that holds the steps, not on a step", k)
			}
		}
		if t.has("memory") {
			d.errorf(t.keys["memory"], "memory: set the host memory need on the trial that holds the steps, not on a step: its steps run one after another within it")
		}
	}
}

func (src *sources) s3Spec(r *rawS3) *S3Spec {
	s := &S3Spec{Endpoint: r.endpoint, Region: r.region, Pos: src.pos(r.node)}
	for _, t := range r.download {
		s.Download = append(s.Download, src.transfer(&t.rawTransfer))
	}
	for _, t := range r.upload {
		s.Upload = append(s.Upload, src.transfer(&t.rawTransfer))
	}
	return s
}

func (src *sources) transfer(r *rawTransfer) Transfer {
	t := r.Transfer
	t.Exclude = slices.Clone(t.Exclude)
	t.Pos = src.pos(r.node)
	t.FromPos, t.ToPos = src.pos(r.at("from")), src.pos(r.at("to"))
	return t
}
