package runner

import (
	"sync"

	"github.com/runall/runall/runner/plan"
)

// madeTasks knows where each task the run made as it went stands (a sampler's trial in its
// block, a trial's steps in the trial), for the outputs, which know the plan's tasks only.
// Safe for concurrent use.
type madeTasks struct {
	mu     sync.Mutex
	parent map[*plan.Task]*plan.Task
}

// add records t as made in parent, and its steps in it.
func (m *madeTasks) add(t, parent *plan.Task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.parent == nil {
		m.parent = map[*plan.Task]*plan.Task{}
	}
	m.parent[t] = parent
	for _, s := range t.Steps {
		m.parent[s] = t
	}
}

// parentOf is where t stands; ok is false for a task the run did not make.
func (m *madeTasks) parentOf(t *plan.Task) (*plan.Task, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.parent[t]
	return p, ok
}
