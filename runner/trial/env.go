package trial

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
)

// TaskVars is the environment a task's command gets before its placement: runall's, what
// earlier tasks exported, its params (each in plan.ParamVar: how a sampler's values reach its
// commands as data), and the task's env: (with $VAR expanded against what came before).
func TaskVars(t *plan.Task, env []string) []string {
	env = slices.Clone(env)
	for _, p := range t.Params {
		env = proc.Setenv(env, plan.ParamVar(p.Name), p.Value)
	}
	for _, v := range t.Env {
		val := plan.Expand(v.Value, func(name string) (string, bool) { return proc.Lookup(env, name) })
		env = proc.Setenv(env, v.Name, val)
	}
	env = proc.Setenv(env, "RUNALL_TASK_NAME", t.Name)
	return proc.Setenv(env, "RUNALL_TASK_ID", fmt.Sprint(t.ID))
}

// TaskPath resolves a path from the task file against the task file's directory.
func TaskPath(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
