package plan

import (
	"fmt"

	"github.com/runall/runall/runner/taskfile"
)

// Where a task stands (a top-level task, a parallel child, a trial's step) decides which
// keys it may have: checked on the task file's tree before anything is built from it.
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
	checkFaultKeys(d, t)
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

// checkAdaptKeys reports sample, search, trials and early-stop where they have no meaning.
func checkAdaptKeys(d *taskfile.Decoder, t *taskfile.Task, level int) {
	for _, k := range []string{"sample", "search"} {
		if t.Has(k) && level != levelTrial {
			d.Errorf(t.Keys[k], "%s: makes the trials of a block: set it on a child of parallel-tasks", k)
		}
	}
	switch {
	case t.Has("sample") && t.Has("search"):
		d.Errorf(t.Keys["search"], "search: cannot be combined with sample: the sampler of search draws the params itself")
	case t.Has("search") && (t.Has("matrix") || t.Has("for-each")):
		d.Errorf(t.Keys["search"], "search: cannot be combined with matrix or for-each: the sampler draws every param")
	case t.Has("sample") && t.Has("for-each"):
		d.Errorf(t.Keys["sample"], "sample: cannot be combined with for-each: make the for-each values a matrix key")
	case (t.Has("sample") || t.Has("search")) && !t.Has("trials"):
		k := "sample"
		if t.Has("search") {
			k = "search"
		}
		d.Errorf(t.Keys[k], "%s: needs trials: N, how many trials to run", k)
	case t.Has("trials") && !t.Has("sample") && !t.Has("search"):
		d.Errorf(t.Keys["trials"], "trials: counts the trials of sample: or search: on this task, which has neither")
	}
	if t.Has("seed") && !t.Has("sample") {
		d.Errorf(t.Keys["seed"], "seed: scrambles the points of sample:, which this task does not have")
	}
	if n := countSearch(t.Parallel); n > 0 && len(t.Parallel) > 1 {
		d.Errorf(t.Keys["parallel-tasks"], "parallel-tasks: a child with search: must be its block's only child: put the other trials in a block of their own")
	}
	if t.Has("early-stop") && !t.Has("parallel-tasks") {
		d.Errorf(t.Keys["early-stop"], "early-stop: stops the losing trials of a block: set it on the task with parallel-tasks, or in config:")
	}
}

func countSearch(ts []*taskfile.Task) int {
	n := 0
	for _, t := range ts {
		if t.Search != nil {
			n++
		}
	}
	return n
}
