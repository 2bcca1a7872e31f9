package main_test

// End-to-end tests of issue 42, point 2: a sampled or asked value is data wherever it
// flows, through env: into a path key too.

import (
	"os"
	"strings"
	"testing"
)

// envPathLines are path keys that reach a sampled value only through env:.
var envPathLines = map[string]string{
	"checkpoint":   "checkpoint: ck/${D}",
	"log-path":     "log-path: logs/${D}",
	"cwd":          "cwd: work/${D}",
	"metrics":      "metrics: out/${D}/m.json",
	"upload: from": "upload: [{from: 'out/${D}/', to: 's3://b/x/'}]",
}

// TestSampleValueThroughEnvRefusedByCheckAndRun: env: {D: "<v>"} then checkpoint: ck/${D}
// (and every other path key) with a sampled "../victim.txt" passed check and the run took
// the path out of its place; both refuse it, naming the key, before anything runs, the
// victim kept. A chain (env: {A: "<v>", D: "x${A}"}) is followed. A plain value runs.
func TestSampleValueThroughEnvRefusedByCheckAndRun(t *testing.T) {
	t.Parallel()
	e := pathsE2E(t)
	for _, d := range []string{"ck", "logs", "work", "out"} {
		if err := os.MkdirAll(e.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for key, line := range envPathLines {
		for _, env := range []string{"{D: '<v>'}", "{A: '<v>', D: 'x${A}'}"} {
			e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - cmd: touch ran\n        env: "+env+"\n        "+line+
				"\n        sample: {v: ['../victim.txt']}\n        trials: 1\n")
			e.refusedTwice(key+" "+env, `sample: `+key+`: `)
			r := e.run("check", "tasks.yml")
			if !strings.Contains(r.stderr, `param v = "../victim.txt" makes a / where its placeholder stands`) {
				t.Errorf("%s %s: check does not say why\n%v", key, env, r)
			}
		}
	}
	// Plain values: each trial its own directory, the run ends well.
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(e.path("work", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"checkpoint", "log-path", "cwd", "metrics"} {
		e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - cmd: touch \"$HOME/ran-$D\"\n        env: {D: '<v>'}\n        "+
			envPathLines[key]+"\n        sample: {v: [a, b]}\n        trials: 2\n")
		e.run("check", "tasks.yml").wantCode(t, 0)
		e.run("tasks.yml").wantCode(t, 0)
		if !e.exists("ran-a") || !e.exists("ran-b") {
			t.Errorf("%s: plain values: the trials did not run", key)
		}
		os.Remove(e.path("ran-a"))
		os.Remove(e.path("ran-b"))
	}
}

// TestParamRefInSearchPathChecks: ${RUNALL_PARAM_v} written in a search: template's path is
// its placeholder, as the docs say: check passed it as unset before.
func TestParamRefInSearchPathChecks(t *testing.T) {
	t.Parallel()
	e := pathsE2E(t)
	e.writeFile("tasks.yml", "config: {objective: {metric: acc, mode: max}}\ntasks:\n  - parallel-tasks:\n      - cmd: train\n"+
		"        checkpoint: ck/${RUNALL_PARAM_v}\n        search: {ask: a, tell: b}\n        trials: 1\n")
	e.run("check", "tasks.yml").wantCode(t, 0)
}
