package trial

import (
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
)

// ExpandStrict expands the ${VAR}s of a path or URL against env: an unset or empty
// variable is an error (plan.ErrUnsetVar), never an empty string that would make
// s3://bucket/${PREFIX} the bucket's root or ${OUT}/ the filesystem's.
func ExpandStrict(s string, env []string) (string, error) {
	return plan.ExpandStrict(s, func(name string) (string, bool) { return proc.Lookup(env, name) })
}
