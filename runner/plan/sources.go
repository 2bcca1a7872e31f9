package plan

import (
	"cmp"
	"slices"

	"github.com/runall/runall/runner/earlystop"
	"github.com/runall/runall/runner/taskfile"
	"gopkg.in/yaml.v3"
)

// What every step of loading shares: the options, the loader's state, and the task file's
// sources with the problems found in them so far.

// LoadOptions are the command line's say in how a task file becomes a plan.
type LoadOptions struct {
	Args []string // extra arguments: replace $1..$n and $* in cmd and name (only when there are some)
	Tags []string // keep only tasks whose tags (own or inherited) include one of these; empty: all
	Dir  string   // working directory: $include paths and Plan.Dir resolve against it; "": os.Getwd
	// MaxTasks overrides config: max-tasks, the most tasks the file may expand to; 0: the
	// file's setting, else DefaultMaxTasks.
	MaxTasks int
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
	dir      string                // the working directory it is loaded in: Plan.Dir
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

// problemAt records a problem at the task's key, or at the task when the key is inherited.
func (src *sources) problemAt(t *taskfile.Task, key, msg string) {
	n := t.Node
	if k, ok := t.Keys[key]; ok {
		n = k
	}
	src.problems = append(src.problems, Problem{Pos: src.pos(n), Msg: msg})
}
