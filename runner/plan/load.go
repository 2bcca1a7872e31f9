package plan

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/taskfile"
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
func (l *loader) read(dir string) (*taskfile.File, error) {
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
		return nil, &FileError{Problems: []Problem{taskfile.SyntaxProblem(l.src.path, data, err)}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &FileError{Problems: []Problem{{Pos: Pos{File: l.src.path}, Msg: "the file is empty: want a mapping with a tasks: list"}}}
	}
	root := doc.Content[0]

	files, problems, at := taskfile.Splice(root, l.src.path, filepath.Clean(abs), dir, l.src.fileOf)
	l.src.files = files
	l.src.problems = append(l.src.problems, problems...)
	l.src.nodeProblems(at)
	if err := l.checkSize(root); err != nil {
		return nil, err
	}

	d0 := &taskfile.Decoder{}
	checkNUL(d0, root)
	l.src.nodeProblems(d0.Problems)
	l.src.checkArgs(l.opts.Args)
	var raw taskfile.File
	l.src.absorb(raw.UnmarshalYAML(root))
	d := &taskfile.Decoder{}
	for _, t := range raw.Tasks {
		checkTask(d, t, levelTop)
	}
	l.src.nodeProblems(d.Problems)
	if err := l.src.fileError(); err != nil {
		return nil, err
	}
	return &raw, nil
}

// build makes the plan: the config with its defaults, the s3: block, and the tasks expanded
// (arguments, for-each, matrix, inheritance), filtered by tags and numbered.
func (l *loader) build(raw *taskfile.File, dir string) (*Plan, error) {
	plan := &Plan{File: l.src.path, Dir: dir, Config: DefaultConfig()}
	l.execPattern = "<exec>"
	if raw.Config != nil {
		plan.Config, l.execPattern = raw.Config.Config, raw.Config.ExecPattern
		for _, w := range raw.Config.Warnings {
			plan.Warnings = append(plan.Warnings, Problem{Pos: l.src.pos(w.Node), Msg: w.Msg})
		}
	}
	if n := plan.Config.Notify; n != nil {
		if u := valueNode(valueNode(raw.Config.Node, "notify"), "url"); u != nil {
			n.Pos = l.src.pos(u)
		}
	}
	configSharing(l.src, raw, &plan.Config)
	l.cfg = plan.Config
	if raw.S3 != nil {
		plan.S3 = l.src.s3Spec(raw.S3)
	}
	if l.opts.MaxTasks > 0 {
		plan.Config.MaxTasks = l.opts.MaxTasks
	}
	if !l.checkExpansion(raw.Tasks, plan.Config.MaxTasks) {
		return nil, l.src.fileError()
	}
	applyArgs(raw.Tasks, l.opts.Args)
	if raw.Config != nil && plan.Config.EarlyStop != nil {
		plan.Config.EarlyStop = l.fillEarlyStop(plan.Config.EarlyStop, raw.Config.EarlyStopAt)
		l.cfgEarlyStop = plan.Config.EarlyStop
	}
	plan.Tasks = l.expandTasks(raw.Tasks, inherited{formats: plan.Config.MetricFormats}, levelTop)
	plan.LogParams = logSampled(raw.Tasks)
	l.checkUnfilled(plan.Tasks, map[keyText]bool{})
	if err := l.src.fileError(); err != nil {
		return nil, err
	}
	if tags := l.opts.Tags; len(tags) > 0 {
		plan.Tasks, plan.Filtered = filterTags(plan.Tasks, tags), true
		if len(plan.Tasks) == 0 {
			plan.Warnings = append(plan.Warnings, Problem{Pos: Pos{File: l.src.path}, Msg: fmt.Sprintf("no task has any of the tags %s: nothing to run", strings.Join(tags, ","))})
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
	return &FileError{Problems: []Problem{{Pos: Pos{File: l.src.path}, Msg: fmt.Sprintf(
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

func (src *sources) nodeProblems(ps taskfile.NodeProblems) {
	for _, p := range ps {
		src.problems = append(src.problems, Problem{Pos: src.pos(p.Node), Msg: p.Msg})
	}
}

func (src *sources) absorb(err error) {
	d := &taskfile.Decoder{}
	d.Absorb(err)
	src.nodeProblems(d.Problems)
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
func checkTask(d *taskfile.Decoder, t *taskfile.Task, level int) {
	if t.Node == nil || t.Keys == nil { // not a mapping: already reported
		return
	}
	label := "this task"
	if t.Name != "" {
		label = fmt.Sprintf("task %q", t.Name)
	}
	if t.Cmd == "" && t.URL == "" && !t.Has("parallel-tasks") && !t.Has("tasks") && !t.UnknownKeys {
		switch level {
		case levelTop:
			d.Errorf(t.Node, "%s has nothing to run: give it cmd, url or parallel-tasks", label)
		case levelTrial:
			d.Errorf(t.Node, "%s has nothing to run: give it cmd, url, or tasks (a trial's steps)", label)
		default:
			d.Errorf(t.Node, "%s has nothing to run: give it cmd or url", label)
		}
	}
	checkNesting(d, t, level)
	if t.MD5 != "" && t.URL == "" {
		d.Errorf(t.Keys["md5"], "md5: checks the script downloaded from url, but this task has no url")
	}
	if t.GPUCap != nil && *t.GPUCap && t.GPUMemory != nil && t.GPUMemory.Auto {
		d.Errorf(t.Keys["gpu-memory-cap"], "gpu-memory-cap: needs gpu-memory set to a size, not auto")
	}
	checkAdaptKeys(d, t, level)
	if t.Has("for-each") && t.Has("matrix") {
		d.Errorf(t.Keys["matrix"], "matrix: cannot be combined with for-each on one task: make the for-each values one more matrix key")
	}
	for _, c := range t.Parallel {
		checkTask(d, c, levelTrial)
	}
	for _, s := range t.Steps {
		checkTask(d, s, levelStep)
	}
}

// checkNesting reports commands beside children or steps, and lists nested where they may
// not be.
func checkNesting(d *taskfile.Decoder, t *taskfile.Task, level int) {
	for _, key := range []string{"cmd", "url"} {
		switch {
		case !t.Has(key) || (key == "cmd" && t.Cmd == "") || (key == "url" && t.URL == ""):
		case t.Has("parallel-tasks"):
			d.Errorf(t.Keys[key], "%s: a task with parallel-tasks only runs its children; move %s into a task of its own", key, key)
		case t.Has("tasks"):
			d.Errorf(t.Keys[key], "%s: a task with tasks (steps) only runs its steps; make %s one of the steps", key, key)
		}
	}
	if t.Has("order") && !t.Has("parallel-tasks") {
		d.Errorf(t.Keys["order"], "order: orders the trials of a block; set it on the task with parallel-tasks, or in config:")
	}
	if t.Has("parallel-tasks") {
		if level != levelTop {
			d.Errorf(t.Keys["parallel-tasks"], "parallel-tasks: cannot be nested: a parallel child runs a command, or its own steps with tasks:")
		}
		if t.Has("tasks") {
			d.Errorf(t.Keys["tasks"], "tasks: a task cannot have both parallel-tasks and tasks")
		}
	}
	if t.Has("tasks") {
		switch level {
		case levelTop:
			d.Errorf(t.Keys["tasks"], "tasks: only a child of parallel-tasks can have its own steps; list these at the top level, or wrap the task in parallel-tasks to make it a trial")
		case levelStep:
			d.Errorf(t.Keys["tasks"], "tasks: a step cannot have steps of its own")
		}
	}
	if t.Has("checkpoint") && level != levelTrial {
		d.Errorf(t.Keys["checkpoint"], "checkpoint: is a trial's: set it on a child of parallel-tasks (placeholders such as ckpt/<lr> give each trial its own)")
	}
	if level == levelStep {
		for _, k := range gpuKeys {
			if t.Has(k) {
				d.Errorf(t.Keys[k], "%s: set GPU needs on the trial that holds the steps, not on a step", k)
			}
		}
		if t.Has("memory") {
			d.Errorf(t.Keys["memory"], "memory: set the host memory need on the trial that holds the steps, not on a step: its steps run one after another within it")
		}
	}
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
