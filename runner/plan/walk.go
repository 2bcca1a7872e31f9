package plan

import "strings"

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
