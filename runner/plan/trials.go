package plan

// Commands is a trial's commands: itself, or its steps.
func Commands(t *Task) []*Task {
	if len(t.Steps) > 0 {
		return t.Steps
	}
	return []*Task{t}
}

// Key is a trial's name in the claims queue and its resume marker: readable, and
// unique by its Key.
func Key(t *Task) string { return Slug(t.Name) + "-" + t.Key }
