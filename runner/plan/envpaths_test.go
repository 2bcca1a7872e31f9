package plan

import (
	"strings"
	"testing"
)

// envPathKeys is a trial of a sweep whose path key reaches the placeholder <v> only through
// env: (its own, its block's, a chain of them), filled by fill (sample: or search:).
func envPathKeys(key, fill string) string {
	texts := map[string]string{
		"checkpoint":   "        env: {D: '<v>'}\n        checkpoint: ck/${D}\n",
		"log-path":     "        env: {D: '<v>'}\n        log-path: logs/${D}\n",
		"cwd":          "        env: {D: '<v>'}\n        cwd: work/$D\n",
		"metrics":      "        env: {D: '<v>'}\n        metrics: out/${D}/metrics.json\n",
		"upload: from": "        env: {D: '<v>'}\n        upload: [{from: 'out/${D}/', to: 's3://b/runs/x/'}]\n",
		"upload: to":   "        env: {D: '<v>'}\n        upload: [{from: 'out/', to: 's3://b/runs/${D}/'}]\n",
		"a chain":      "        env: {A: '<v>', B: '${A}', C: '${B:-none}'}\n        checkpoint: ck/${C}\n",
		"step cwd":     "        env: {D: '<v>'}\n        tasks: [{cmd: eval, cwd: 'eval/${D}'}]\n",
		"step's env":   "        tasks: [{cmd: eval, env: {D: '<v>'}, log-path: 'logs/${D}'}]\n",
		"block's env":  "        checkpoint: ck/${D}\n",
		"block's cwd":  "        env: {D: '<v>'}\n",
	}
	cmd := "        cmd: train\n"
	if strings.HasPrefix(key, "step") {
		cmd = ""
	}
	block := "tasks:\n  - parallel-tasks:\n"
	switch key {
	case "block's env": // the block's env: reaches the trial's value by its variable
		block = "tasks:\n  - env: {D: '${RUNALL_PARAM_v}'}\n    parallel-tasks:\n"
	case "block's cwd":
		block = "tasks:\n  - cwd: work/${D}\n    parallel-tasks:\n"
	}
	return objective + block + "      - name: t <v>\n" + cmd + texts[key] + fill
}

var envPathKeyNames = []string{"checkpoint", "log-path", "cwd", "metrics", "upload: from", "upload: to", "a chain", "step cwd", "step's env", "block's env", "block's cwd"}

// TestValueThroughEnvLeavesItsPlaceRefused (issue 42, point 2): a sample: or a sampler's
// value that reaches a path key through env: (env: {D: "<v>"} then checkpoint: ck/${D}) is
// judged as a placeholder written in the key: refused where it would leave that place, as the
// file loads (check and run) and as the sampler's trial is made; a plain name is not, and
// two trials with their own values have checkpoint directories of their own.
func TestValueThroughEnvLeavesItsPlaceRefused(t *testing.T) {
	for _, key := range envPathKeyNames {
		for _, v := range leavingValues {
			quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
			_, err := loadYAML(t, envPathKeys(key, "        sample: {v: [\""+quoted+"\"]}\n        trials: 1\n"), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), "sample: ") || !strings.Contains(err.Error(), "where its placeholder stands") {
				t.Errorf("%s, sample %q: got %v, want it refused", key, v, err)
			}
			tmpl := mustLoadYAML(t, envPathKeys(key, "        search: {ask: a, tell: b}\n        trials: 1\n"),
				LoadOptions{}).Tasks[0].Parallel[0]
			if _, err := tmpl.Instantiate(0, []Param{{Name: "v", Value: v}}); err == nil || !strings.Contains(err.Error(), "where its placeholder stands") {
				t.Errorf("%s, search value %q: got %v, want it refused", key, v, err)
			}
		}
		if _, err := loadYAML(t, envPathKeys(key, "        sample: {v: [ok-1.5, 'b c']}\n        trials: 2\n"), LoadOptions{}); err != nil {
			t.Errorf("%s: plain names refused: %v", key, err)
		}
		tmpl := mustLoadYAML(t, envPathKeys(key, "        search: {ask: a, tell: b}\n        trials: 1\n"), LoadOptions{}).Tasks[0].Parallel[0]
		if _, err := tmpl.Instantiate(0, []Param{{Name: "v", Value: "0.01"}}); err != nil {
			t.Errorf("%s: a plain value refused: %v", key, err)
		}
	}
}

// TestValueThroughEnvErrorSaysWhere: the refusal names the key as written and the path with
// env: put in, so that the user sees how the value got there.
func TestValueThroughEnvErrorSaysWhere(t *testing.T) {
	_, err := loadYAML(t, "tasks:\n  - parallel-tasks:\n      - cmd: train\n        env: {A: '<lr>', B: 'x${A}'}\n        checkpoint: ck/${B}\n        sample: {lr: ['../../victim']}\n        trials: 1\n", LoadOptions{})
	want := `tasks.yml:6:9: sample: checkpoint: ck/${B} (ck/x<lr> with env: put in): param lr = "../../victim" makes a / where its placeholder stands`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant %q", err, want)
	}
}

// TestParamRefInSearchPathIsItsPlaceholder (issue 42, point 2): ${RUNALL_PARAM_v} written in
// a search: template's path counts as its placeholder: check does not call it unset, the
// sampler's value is judged where it stands, and a reference to a param the sampler did not
// hand out refuses the trial.
func TestParamRefInSearchPathIsItsPlaceholder(t *testing.T) {
	for _, line := range []string{
		"        checkpoint: ck/${RUNALL_PARAM_v}\n",
		"        cwd: work/$RUNALL_PARAM_v\n",
		"        upload: [{from: 'out/${RUNALL_PARAM_v}/', to: 's3://b/runs/${RUNALL_PARAM_v}/'}]\n",
		"        env: {D: '${RUNALL_PARAM_v}'}\n        log-path: logs/${D}\n",
	} {
		p := mustLoadYAML(t, objective+"tasks:\n  - parallel-tasks:\n      - name: t\n        cmd: train\n"+line+
			"        search: {ask: a, tell: b}\n        trials: 1\n", LoadOptions{})
		if err := p.CheckVars(nil); err != nil {
			t.Errorf("%s: check: %v", line, err)
		}
		tmpl := p.Tasks[0].Parallel[0]
		if _, err := tmpl.Instantiate(0, []Param{{Name: "v", Value: "../victim"}}); err == nil || !strings.Contains(err.Error(), "where its placeholder stands") {
			t.Errorf("%s: ../victim: got %v, want it refused", line, err)
		}
		if _, err := tmpl.Instantiate(0, []Param{{Name: "v", Value: "0.01"}}); err != nil {
			t.Errorf("%s: 0.01 refused: %v", line, err)
		}
		if _, err := tmpl.Instantiate(0, []Param{{Name: "w", Value: "0.01"}}); err == nil || !strings.Contains(err.Error(), "the sampler gave no value for ${RUNALL_PARAM_v}") {
			t.Errorf("%s: no v: got %v, want it refused", line, err)
		}
	}
	// A param of the template's own (its block's matrix) is set: only the sampler's are asked for.
	p := mustLoadYAML(t, objective+"tasks:\n  - name: b <seed>\n    matrix: {seed: [1, 2]}\n    parallel-tasks:\n      - name: t\n        cmd: train\n"+
		"        log-path: logs/${RUNALL_PARAM_seed}/<v>\n        search: {ask: a, tell: b}\n        trials: 1\n", LoadOptions{})
	if _, err := p.Tasks[0].Parallel[0].Instantiate(0, []Param{{Name: "v", Value: "0.01"}}); err != nil {
		t.Errorf("a reference to the block's matrix param: %v", err)
	}
	// Outside a template, a param's variable the file does not set is unset, as before.
	p = mustLoadYAML(t, "tasks:\n  - parallel-tasks:\n      - {cmd: train, checkpoint: 'ck/${RUNALL_PARAM_v}'}\n", LoadOptions{})
	if err := p.CheckVars(nil); err == nil || !strings.Contains(err.Error(), "${RUNALL_PARAM_v} is unset or empty") {
		t.Errorf("outside a template: got %v", err)
	}
}
