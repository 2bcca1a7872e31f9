package runner

import "github.com/runall/runall/runner/plan"

// trialCommands is a trial's commands: itself, or its steps.
func trialCommands(t *plan.Task) []*plan.Task {
	if len(t.Steps) > 0 {
		return t.Steps
	}
	return []*plan.Task{t}
}

// trialKey is a trial's name in the claims queue and its resume marker: readable, and
// unique by its Key.
func trialKey(t *plan.Task) string { return plan.Slug(t.Name) + "-" + t.Key }
