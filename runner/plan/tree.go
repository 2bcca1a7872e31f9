package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// Walk calls fn for every task in the tree, in plan order: blocks, trials, steps and
// commands.
func Walk(tasks []*Task, fn func(*Task)) {
	for _, t := range tasks {
		fn(t)
		Walk(t.Parallel, fn)
		Walk(t.Steps, fn)
	}
}

// WalkCommands calls fn for every command task, in plan order: the leaves of the tree.
func WalkCommands(tasks []*Task, fn func(*Task)) {
	for _, t := range tasks {
		switch {
		case t.IsBlock():
			WalkCommands(t.Parallel, fn)
		case len(t.Steps) > 0:
			WalkCommands(t.Steps, fn)
		default:
			fn(t)
		}
	}
}

// FirstGPUTask is the first task, in plan order, that asks for GPU admission; nil if none.
func (p *Plan) FirstGPUTask() *Task {
	var found *Task
	Walk(p.Tasks, func(t *Task) {
		if found == nil && t.GPU != nil {
			found = t
		}
	})
	return found
}

// NeedsGPU reports whether any task asks for GPU admission.
func (p *Plan) NeedsGPU() bool { return p.FirstGPUTask() != nil }

// MultiGPUTask is the first task, in plan order, that asks for more than one GPU; nil when
// none does. A process is the client of one MPS server: gpu-isolation cannot serve it.
func MultiGPUTask(tasks []*Task) *Task {
	var found *Task
	Walk(tasks, func(t *Task) {
		if found == nil && t.GPU != nil && t.GPU.Devices > 1 {
			found = t
		}
	})
	return found
}

// HasTransfers reports whether the plan moves anything to or from S3.
func (p *Plan) HasTransfers() bool {
	if p.S3 != nil && (len(p.S3.Download) > 0 || len(p.S3.Upload) > 0) {
		return true
	}
	found := false
	Walk(p.Tasks, func(t *Task) { found = found || len(t.Upload) > 0 })
	return found
}

// Slug makes a task name safe and short for a file name.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
		if ok {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "task"
	}
	return s
}

// identity is a short stable digest of parts: the key of a task or group in the state that
// runs of a file keep (durations, learned needs), so that it survives edits elsewhere in the
// file but not a rename or a changed command.
func identity(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// filterTags keeps the tasks with one of the wanted tags. A parallel block (or a trial with
// steps) is kept when one of its children is, with only those children.
func filterTags(tasks []*Task, want []string) []*Task {
	var out []*Task
	for _, t := range tasks {
		switch {
		case len(t.Parallel) > 0:
			if kept := filterTags(t.Parallel, want); len(kept) > 0 {
				t.Parallel = kept
				out = append(out, t)
			}
		case len(t.Steps) > 0:
			if kept := filterTags(t.Steps, want); len(kept) > 0 {
				t.Steps = kept
				out = append(out, t)
			}
		case slices.ContainsFunc(t.Tags, func(tag string) bool { return slices.Contains(want, tag) }):
			out = append(out, t)
		}
	}
	return out
}

// numberTasks gives every task its ID, from 1, in file order: a block, then its children,
// each trial followed by its steps.
func numberTasks(tasks []*Task) {
	id := 0
	var walk func([]*Task)
	walk = func(ts []*Task) {
		for _, t := range ts {
			id++
			t.ID = id
			walk(t.Parallel)
			walk(t.Steps)
		}
	}
	walk(tasks)
}

// Trials returns every child of every parallel block, in file order.
func (p *Plan) Trials() []*Task {
	var out []*Task
	for _, t := range p.Tasks {
		out = append(out, t.Parallel...)
	}
	return out
}

// uniqueKeys tells apart tasks whose name path and command are the same (a setup step run
// twice, say): the second gets a key of its own, by its place among its namesakes.
func uniqueKeys(tasks []*Task) {
	seen := map[string]int{}
	Walk(tasks, func(t *Task) {
		seen[t.Key]++
		if n := seen[t.Key]; n > 1 {
			t.Key = identity(t.Key, strconv.Itoa(n))
		}
	})
}

// TrialCount is how many trials a block runs: its children, a search template counting
// the trials it asks for.
func (t *Task) TrialCount() int {
	n := 0
	for _, c := range t.Parallel {
		if c.Search != nil {
			n += c.Search.Trials
		} else {
			n++
		}
	}
	return n
}

// hasHostNeeds reports whether any task sets memory:.
func (p *Plan) hasHostNeeds() bool {
	var walk func([]*Task) bool
	walk = func(ts []*Task) bool {
		for _, t := range ts {
			if t.Host != nil || walk(t.Parallel) || walk(t.Steps) {
				return true
			}
		}
		return false
	}
	return walk(p.Tasks)
}

// NeedsHost reports whether any task asks for host memory admission (memory:).
func (p *Plan) NeedsHost() bool { return p.hasHostNeeds() }
