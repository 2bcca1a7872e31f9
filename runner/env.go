package runner

import (
	"fmt"
	"slices"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/proc"
)

// baseEnv is runall's environment plus what identifies the run to its tasks.
func (r *run) baseEnv() []string {
	env := slices.Clone(r.opts.Environ)
	env = proc.Setenv(env, "RUNALL_RUN_ID", r.id)
	env = proc.Setenv(env, "RUNALL_LOG_DIR", r.logDir)
	if r.opts.Shard.active() {
		env = proc.Setenv(env, "RUNALL_SHARD", r.opts.Shard.String())
	}
	return env
}

// taskEnv is the environment a task's command gets: runall's, what earlier tasks exported,
// the task's env: (with $VAR expanded against what came before), and its GPU placement.
func (r *run) taskEnv(t *plan.Task, env []string, p *admit.Placement) []string {
	env = slices.Clone(env)
	for _, v := range t.Env {
		val := plan.Expand(v.Value, func(name string) (string, bool) { return proc.Lookup(env, name) })
		env = proc.Setenv(env, v.Name, val)
	}
	env = proc.Setenv(env, "RUNALL_TASK_NAME", t.Name)
	env = proc.Setenv(env, "RUNALL_TASK_ID", fmt.Sprint(t.ID))
	if p != nil {
		own := func(name string) bool {
			return slices.ContainsFunc(t.Env, func(v plan.EnvVar) bool { return v.Name == name })
		}
		env = r.fw.Env(env, r.admit.DeviceEnv(p), p.Need, p.Total, t.GPU.CapToNeed, own)
	}
	return env
}

// getenv looks names up in env, for os.Expand.
func getenv(env []string) func(string) string {
	return func(name string) string { v, _ := proc.Lookup(env, name); return v }
}
