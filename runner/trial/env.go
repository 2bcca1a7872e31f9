package trial

import (
	"fmt"
	"slices"

	"github.com/runall/runall/internal/kernelpath"
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

// TaskPath resolves a path from the task file against dir (the task file's directory, or a
// command's), a ".." in it taken after the link before it as the kernel takes it: the place
// the trial reaches by that name, which is the one runall judges, restores and empties.
func TaskPath(dir, p string) string {
	return kernelpath.Clean(kernelpath.Join(dir, p))
}
