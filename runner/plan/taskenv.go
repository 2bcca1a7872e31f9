package plan

import (
	"fmt"
	"slices"

	"github.com/runall/runall/internal/envlist"
	"github.com/runall/runall/internal/pathname"
)

// TaskVars is the environment a task's command gets before its placement: runall's, what
// earlier tasks exported, its params (each in ParamVar: how a sampler's values reach its
// commands as data), and the task's env: (with $VAR expanded against what came before).
func TaskVars(t *Task, env []string) []string {
	env = slices.Clone(env)
	for _, p := range t.Params {
		env = envlist.Set(env, ParamVar(p.Name), p.Value)
	}
	for _, v := range t.Env {
		val := Expand(v.Value, func(name string) (string, bool) { return envlist.Lookup(env, name) })
		env = envlist.Set(env, v.Name, val)
	}
	env = envlist.Set(env, "RUNALL_TASK_NAME", t.Name)
	return envlist.Set(env, "RUNALL_TASK_ID", fmt.Sprint(t.ID))
}

// ExpandStrictEnv expands the ${VAR}s of a path or URL against env: an unset or empty
// variable is an error (ErrUnsetVar), never an empty string that would make
// s3://bucket/${PREFIX} the bucket's root or ${OUT}/ the filesystem's.
func ExpandStrictEnv(s string, env []string) (string, error) {
	return ExpandStrict(s, func(name string) (string, bool) { return envlist.Lookup(env, name) })
}

// TaskPath resolves a path from the task file against dir (the task file's directory, or a
// command's), a ".." in it taken after the link before it as the kernel takes it: the place
// the trial reaches by that name, which is the one runall judges, restores and empties.
func TaskPath(dir, p string) string {
	return pathname.Clean(pathname.Join(dir, p))
}
