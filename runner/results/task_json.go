package results

import "encoding/json"

// taskFields is Task without its methods: its JSON as the struct tags say.
type taskFields Task

// noExit reports whether the task has no exit code of its own to show: it was skipped
// (also one that ran here before, paused, and was ended by another runall), or never
// started. ExitCode holds -1 for it, which reads like a code a process returned.
func (t *Task) noExit() bool {
	return t.Status == StatusSkipped || t.Status == StatusPending
}

// MarshalJSON writes the task as its struct tags say, without exit_code where it has none
// (noExit).
func (t Task) MarshalJSON() ([]byte, error) {
	if !t.noExit() {
		return json.Marshal(taskFields(t))
	}
	return json.Marshal(struct {
		taskFields
		ExitCode *int `json:"exit_code,omitempty"` // hides taskFields' exit_code
	}{taskFields: taskFields(t)})
}

// UnmarshalJSON reads a task; one with no exit_code (skipped, never started) gets -1.
func (t *Task) UnmarshalJSON(b []byte) error {
	v := struct {
		*taskFields
		ExitCode *int `json:"exit_code"`
	}{taskFields: (*taskFields)(t)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t.ExitCode = -1
	if v.ExitCode != nil {
		t.ExitCode = *v.ExitCode
	}
	return nil
}
