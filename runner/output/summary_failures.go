package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/runall/runall/runner/results"
)

// maxGroupNames is how many trials a failure group names before it counts the rest.
const maxGroupNames = 5

// writeFailureGroups prints the run's failures grouped by class and signature, the largest
// group first, so that a thousand trials that failed alike read as one line.
func writeFailureGroups(b *bytes.Buffer, res *results.Run) {
	groups := res.FailureGroups()
	if len(groups) == 0 {
		return
	}
	b.WriteString("\nFailures by class and signature:\n")
	for _, g := range groups {
		names := g.Tasks
		more := ""
		if len(names) > maxGroupNames {
			names, more = names[:maxGroupNames], fmt.Sprintf(" and %d more", len(g.Tasks)-maxGroupNames)
		}
		for i, n := range names {
			names[i] = cleanName(n)
		}
		fmt.Fprintf(b, "  %d× %s\n    %s%s\n", len(g.Tasks), cleanLine(g.Signature), strings.Join(names, ", "), more)
	}
}
