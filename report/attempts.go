package report

import (
	"fmt"
	"strings"

	"github.com/runall/runall/runner/results"
)

// attemptsText is a trial's attempts as the status cell's hover lists them, each failed one
// with its class (runner/failclass) and reason: "attempt 1: crashed, exit code 1: ..."; ""
// for a trial with one attempt that did not fail.
func attemptsText(t results.Task) string {
	if len(t.AttemptList) == 0 || len(t.AttemptList) == 1 && t.AttemptList[0].Class == "" {
		return ""
	}
	var lines []string
	for _, a := range t.AttemptList {
		s := fmt.Sprintf("attempt %d: ", a.N)
		if a.Class == "" {
			s += "ended"
		} else {
			s += a.Class
		}
		if a.Signal != "" {
			s += ", " + a.Signal
		} else {
			s += fmt.Sprintf(", exit code %d", a.ExitCode)
		}
		if a.Reason != "" {
			s += ": " + a.Reason
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

// failedClass is " (crashed)" for a failed trial whose last failed attempt has a class, ""
// otherwise.
func failedClass(t results.Task) string {
	if a := t.Failed(); a != nil {
		return " (" + a.Class + ")"
	}
	return ""
}
