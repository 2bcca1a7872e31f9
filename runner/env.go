package runner

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/runner/shard"
)

// baseEnv is runall's environment plus what identifies the run to its tasks. It is
// clipped: whoever appends to it gets a copy, so that the parts sharing it never see
// each other's changes.
func baseEnv(environ []string, runID, logDir string, shard shard.Shard) []string {
	env := slices.Clone(environ)
	env = proc.Setenv(env, "RUNALL_RUN_ID", runID)
	env = proc.Setenv(env, "RUNALL_LOG_DIR", logDir)
	if shard.Active() {
		env = proc.Setenv(env, "RUNALL_SHARD", shard.String())
	}
	return slices.Clip(env)
}

// taskVars is the environment a task's command gets before its placement: runall's, what
// earlier tasks exported, its params (each in plan.ParamVar: how a sampler's values reach its
// commands as data), and the task's env: (with $VAR expanded against what came before).
func taskVars(t *plan.Task, env []string) []string {
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

// getenv looks names up in env, for os.Expand.
func getenv(env []string) func(string) string {
	return func(name string) string { v, _ := proc.Lookup(env, name); return v }
}

// taskPath resolves a path from the task file against the task file's directory.
func taskPath(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
