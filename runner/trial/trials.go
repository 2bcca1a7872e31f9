package trial

import "github.com/runall/runall/runner/plan"

// Commands is a trial's commands: itself, or its steps.
func Commands(t *plan.Task) []*plan.Task {
	if len(t.Steps) > 0 {
		return t.Steps
	}
	return []*plan.Task{t}
}

// Key is a trial's name in the claims queue and its resume marker: readable, and
// unique by its Key.
func Key(t *plan.Task) string { return plan.Slug(t.Name) + "-" + t.Key }
