package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runall/runall/internal/pathname"
	"github.com/runall/runall/runner/taskfile"
	"gopkg.in/yaml.v3"
)

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
	l := &loader{src: &sources{path: path, dir: dir, fileOf: map[*yaml.Node]string{}}, opts: opts}
	raw, err := l.read(dir)
	if err != nil {
		return nil, err
	}
	return l.build(raw, dir)
}

// read parses the task file and what it includes, decodes it and checks each task's keys
// against where it stands.
func (l *loader) read(dir string) (*taskfile.File, error) {
	abs := pathname.Join(dir, l.src.path) // read as the kernel finds it
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

	files, problems, at := taskfile.Splice(root, l.src.path, pathname.Real(abs), dir, l.src.fileOf)
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
	plan := &Plan{File: l.src.path, Files: l.src.files, Dir: dir, Config: DefaultConfig()}
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
