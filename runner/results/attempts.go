package results

import (
	"cmp"
	"slices"
	"time"
)

// StatusDiverged is a trial runall ended because its watched metric went NaN or infinite
// (diverged-on): like pruned, not a failure of the run, and not retried.
const StatusDiverged Status = "diverged"

// Attempt is one attempt of a trial as results.json lists it (a task's attempt_list):
// how it ended and, when it failed, its class (runner/failclass: oom, hung, diverged,
// crashed, timeout, not-runnable, preempted) and signature (what failures that are alike
// share: the class, the exit, the error line with its numbers, paths and addresses taken out).
type Attempt struct {
	N         int       `json:"attempt"`
	Class     string    `json:"class,omitempty"` // "" for one that ended ok, paused or pruned
	ExitCode  int       `json:"exit_code"`       // -1 when a signal ended it, or it never started
	Signal    string    `json:"signal,omitempty"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Reason    string    `json:"reason,omitempty"`
	Signature string    `json:"signature,omitempty"`
	// Params is the on-oom param's value the attempt ran with, for a trial on-oom halved
	// (schema 3); none for any other.
	Params map[string]string `json:"params,omitempty"`
}

// FailureGroup is the failed trials that share a signature, as the summary groups them.
type FailureGroup struct {
	Class, Signature string
	Tasks            []string // the trials' names, in the run's order
}

// Failed is the attempt that ended a failed task for good: its last one with a class; nil
// when the task did not fail or recorded none.
func (t Task) Failed() *Attempt {
	if t.Status != StatusFailed {
		return nil
	}
	for i := len(t.AttemptList) - 1; i >= 0; i-- {
		if t.AttemptList[i].Class != "" {
			return &t.AttemptList[i]
		}
	}
	return nil
}

// countClasses sets FailureClasses: how many attempts of the run's tasks failed in each class.
func (r *Run) countClasses() {
	r.FailureClasses = nil
	for _, t := range r.Tasks {
		for _, a := range t.AttemptList {
			if a.Class == "" {
				continue
			}
			if r.FailureClasses == nil {
				r.FailureClasses = map[string]int{}
			}
			r.FailureClasses[a.Class]++
		}
	}
}

// FailureGroups are the run's failed tasks grouped by their last attempt's class and
// signature, the largest group first (ties in the order their first trial ran).
func (r *Run) FailureGroups() []FailureGroup {
	var groups []FailureGroup
	for _, t := range r.Tasks {
		a := t.Failed()
		if a == nil {
			continue
		}
		i := slices.IndexFunc(groups, func(g FailureGroup) bool { return g.Class == a.Class && g.Signature == a.Signature })
		if i < 0 {
			groups, i = append(groups, FailureGroup{Class: a.Class, Signature: a.Signature}), len(groups)
		}
		groups[i].Tasks = append(groups[i].Tasks, t.Name)
	}
	slices.SortStableFunc(groups, func(a, b FailureGroup) int { return cmp.Compare(len(b.Tasks), len(a.Tasks)) })
	return groups
}
