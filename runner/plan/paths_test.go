package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointOtherSpellingsRefused (issue 34, rule 1, second bullet): check refused
// checkpoint: . and .. but not the other spellings of the same places, which the run then
// emptied. Each is resolved (variables, cwd:, symlinks) and refused at its key; a directory
// of the trial's own, spelled however, is not.
func TestCheckpointOtherSpellingsRefused(t *testing.T) {
	root := t.TempDir()
	sub, home, other := filepath.Join(root, "sub"), filepath.Join(root, "home"), filepath.Join(root, "other")
	for _, d := range []string{filepath.Join(sub, "work"), home, filepath.Join(other, "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"here": ".", "away": filepath.Join(other, "deep")} {
		if err := os.Symlink(target, filepath.Join(sub, link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(sub)
	environ := []string{"HOME=" + home, "PWD=" + sub, "LOGS=.runall/logs", "ROOT=/"}
	tests := []struct{ dir, cwd, want string }{
		{"../sub", "", "is runall's working directory"},
		{"${PWD}", "", "is runall's working directory"},
		{sub, "", "is runall's working directory"},
		{"ck/../../sub", "", "is runall's working directory"},
		{"${HOME}", "", "is $HOME"},
		{"../..", "", "is a parent of"},
		{"${ROOT}", "", "is the filesystem's root"},
		{"here", "", "is runall's working directory"},           // a symlink to it
		{"away/../../sub", "", "is runall's working directory"}, // .. after a link, as the kernel takes it
		{"../../sub", "work", "is runall's working directory"},
		{"../work", "work", "is the trial's working directory"},
		{".runall", "", "is a parent of the log directory"},
		{"${LOGS}", "", "is the log directory"},
		{".runall/logs/state/checkpoints/t", "", "is inside the log directory"},
		{"${RUNALL_LOG_DIR}/ck", "", "is inside the log directory"},
		{"ck/a", "", ""},
		{"${HOME}/ck", "", ""},
		{"../other/ck", "", ""},
		{"ck", "work", ""},
		{"away/ck", "", ""},
		{"away", "", "is a symbolic link (to " + filepath.Join(other, "deep") + ")"}, // itself a link: never looked in nor replaced
	}
	for _, tt := range tests {
		yaml := "tasks:\n  - parallel-tasks:\n      - cmd: train\n        checkpoint: '" + tt.dir + "'\n"
		if tt.cwd != "" {
			yaml += "        cwd: " + tt.cwd + "\n"
		}
		if err := os.WriteFile("tasks.yml", []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load("tasks.yml", LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.dir, err)
		}
		err = p.CheckCheckpointDirs(environ, ".runall/logs")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkpoint: %s (cwd %q): refused: %v", tt.dir, tt.cwd, err)
		case tt.want != "" && err == nil:
			t.Errorf("checkpoint: %s (cwd %q): not refused, want %q", tt.dir, tt.cwd, tt.want)
		case tt.want != "" && (!strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "tasks.yml:4:9: checkpoint: ")):
			t.Errorf("checkpoint: %s (cwd %q): %v\nwant it at tasks.yml:4:9, saying %q", tt.dir, tt.cwd, err, tt.want)
		}
	}
}

// pathKeys is a trial of a sweep with a placeholder <v> in every key that makes a path of
// it, in a step too; filled by fill (sample: or search:).
func pathKeys(key, fill string) string {
	texts := map[string]string{
		"checkpoint":    "        checkpoint: ck/<v>\n",
		"log-path":      "        log-path: logs/<v>\n",
		"cwd":           "        cwd: work/<v>\n",
		"metrics":       "        metrics: out/<v>/metrics.json\n",
		"upload: from":  "        upload: [{from: 'out/<v>/', to: 's3://b/runs/x/'}]\n",
		"upload: to":    "        upload: [{from: 'out/', to: 's3://b/runs/<v>/'}]\n",
		"step cwd":      "        tasks: [{cmd: eval, cwd: 'eval/<v>'}]\n",
		"block metrics": "",
		"a reference":   "        log-path: logs/${RUNALL_PARAM_v}\n",
	}
	cmd := "        cmd: train\n"
	if key == "step cwd" {
		cmd = ""
	}
	block := "tasks:\n  - parallel-tasks:\n"
	if key == "block metrics" {
		block = "tasks:\n  - metrics: out/<v>/m.json\n    parallel-tasks:\n"
	}
	return objective + block + "      - name: t <v>\n" + cmd + texts[key] + fill
}

// objective lets a file's trials come from search:.
const objective = "config: {objective: {metric: acc, mode: max}}\n"

var (
	pathKeyNames = []string{"checkpoint", "log-path", "cwd", "metrics", "upload: from", "upload: to", "step cwd", "block metrics", "a reference"}
	// leavingValues each take a path out of the place its placeholder stands in.
	leavingValues = []string{"../victim", "../..", "..", ".", "/tmp/victim", "a/b", "a\nb", "", "$HOME", "${PWD}"}
)

// TestValueLeavesItsPlaceRefused (issue 34, rule 1, third bullet): a value from outside the
// task file (a sample: choice as check and run load the file, a sampler's as the run makes
// its trial) that would make a path leave where its placeholder stands is refused, in every
// key that makes a path of a placeholder; a plain name is not.
func TestValueLeavesItsPlaceRefused(t *testing.T) {
	for _, key := range pathKeyNames {
		for _, v := range leavingValues {
			quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
			_, err := loadYAML(t, pathKeys(key, "        sample: {v: [\""+quoted+"\"]}\n        trials: 1\n"), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), "sample: ") || !strings.Contains(err.Error(), "where its placeholder stands") {
				t.Errorf("%s, sample %q: got %v, want it refused", key, v, err)
			}
			tmpl := mustLoadYAML(t, pathKeys(key, "        search: {ask: a, tell: b}\n        trials: 1\n"),
				LoadOptions{}).Tasks[0].Parallel[0]
			if _, err := tmpl.Instantiate(0, []Param{{Name: "v", Value: v}}); err == nil || !strings.Contains(err.Error(), "where its placeholder stands") {
				t.Errorf("%s, search value %q: got %v, want it refused", key, v, err)
			}
		}
		if _, err := loadYAML(t, pathKeys(key, "        sample: {v: [ok-1.5, 'b c']}\n        trials: 2\n"), LoadOptions{}); err != nil {
			t.Errorf("%s: plain names refused: %v", key, err)
		}
		tmpl := mustLoadYAML(t, pathKeys(key, "        search: {ask: a, tell: b}\n        trials: 1\n"), LoadOptions{}).Tasks[0].Parallel[0]
		if _, err := tmpl.Instantiate(0, []Param{{Name: "v", Value: "0.01"}}); err != nil {
			t.Errorf("%s: a plain value refused: %v", key, err)
		}
	}
}

// TestSampleChoicesAreData (issue 34, rule 2, third bullet): sample: choices were pasted into
// the command as shell code; they reach it as a sampler's values do, through their variable,
// quoted for where each placeholder stands, and as their own values where a text is expanded.
func TestSampleChoicesAreData(t *testing.T) {
	p := mustLoadYAML(t, `
tasks:
  - parallel-tasks:
      - name: t <v>
        tasks:
          - cmd: echo <v> "x=<v>" 'y=<v>' && echo $((<n> * 2))
          - cmd: eval <v>
        env: {V: "<v>"}
        sample: {v: ['$(touch x)', '`+"`touch y`"+`', 'a;touch z'], n: 'int(1, 3)'}
        trials: 3
`, LoadOptions{})
	for _, tr := range p.Tasks[0].Parallel {
		first, second := tr.Steps[0].Cmd, tr.Steps[1].Cmd
		if !strings.HasPrefix(first, `echo "${RUNALL_PARAM_v}" "x=${RUNALL_PARAM_v}" 'y='"${RUNALL_PARAM_v}"'' && echo $((`) ||
			strings.Contains(first, "touch") || tr.Env[0].Value != "${RUNALL_PARAM_v}" || second != `eval "${RUNALL_PARAM_v}"` {
			t.Errorf("%s: cmds %q, %q, env %q: want the value handed over as data", tr.Name, first, second, tr.Env[0].Value)
		}
		if !strings.Contains(tr.Name, "touch") {
			t.Errorf("name %q: want the value itself", tr.Name)
		}
	}
	_, err := loadYAML(t, "tasks:\n  - parallel-tasks:\n      - cmd: echo $((<v> + 1))\n        sample: {v: ['1+$(touch x)']}\n        trials: 1\n", LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "arithmetic") {
		t.Errorf("a choice in arithmetic: got %v, want it refused", err)
	}
}

// TestUnfilledPlaceholderInEveryKey (issue 34, rule 5): a placeholder that nothing fills was
// refused in commands but not in env:, whose trial ran with the text <width>; every key
// that takes placeholders is checked alike, at load (check and run) and as a sampler's
// trial is made.
func TestUnfilledPlaceholderInEveryKey(t *testing.T) {
	keys := map[string]string{
		"env: WIDTH":   "env: {WIDTH: '<width>'}",
		"cwd":          "cwd: 'w/<width>'",
		"url":          "url: 'https://example.com/<width>.sh'",
		"log-path":     "log-path: 'logs/<width>.log'",
		"metrics":      "metrics: 'out/<width>.json'",
		"checkpoint":   "checkpoint: 'ck/<width>'",
		"tags":         "tags: ['w<width>']",
		"upload: from": "upload: [{from: 'out/<width>/', to: 's3://b/x/'}]",
		"upload: to":   "upload: [{from: 'out/', to: 's3://b/<width>/'}]",
	}
	for key, line := range keys {
		for _, fill := range []string{"", "search: {ask: a, tell: b}\n        trials: 1\n        "} {
			yaml := objective + "tasks:\n  - parallel-tasks:\n      - cmd: train <lr>\n        " + fill + line + "\n        matrix: {lr: [1, 2]}\n"
			if fill != "" {
				yaml = strings.Replace(yaml, "        matrix: {lr: [1, 2]}\n", "", 1)
				tmpl := mustLoadYAML(t, yaml, LoadOptions{}).Tasks[0].Parallel[0]
				if _, err := tmpl.Instantiate(0, []Param{{Name: "lr", Value: "1"}}); err == nil || !strings.Contains(err.Error(), key+": the sampler gave no value for <width>") {
					t.Errorf("%s, a sampler's trial: got %v", key, err)
				}
				continue
			}
			_, err := loadYAML(t, yaml, LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), key+": <width> is a placeholder that no for-each, matrix or sample fills") ||
				strings.Count(err.Error(), "<width> is a placeholder") != 1 {
				t.Errorf("%s: got %v, want it refused once", key, err)
			}
		}
	}
	mustLoadYAML(t, "tasks:\n  - parallel-tasks:\n      - cmd: train\n        env: {WIDTH: '<width>'}\n        matrix: {width: [1, 2]}\n", LoadOptions{})
	// A block's env: reaches each of its trials, which none of their params fill.
	_, err := loadYAML(t, "tasks:\n  - env: {WIDTH: '<width>'}\n    parallel-tasks:\n      - cmd: train <lr>\n        matrix: {lr: [1, 2]}\n", LoadOptions{})
	if err == nil || strings.Count(err.Error(), "env: WIDTH: <width> is a placeholder") != 1 {
		t.Errorf("a block's env: got %v, want it refused once", err)
	}
}

// TestPBTSampleChoicesAreData (issue 34, rule 2, third bullet): under pbt a trial runs on
// with values of its space, made from the task as written: a sample: choice it moves to
// reaches the command as data there too, and the trial's own checkpoint directory stays
// named in it; a choice that could not is refused as the file loads.
func TestPBTSampleChoicesAreData(t *testing.T) {
	const sweep = objective + `tasks:
  - name: pbt
    early-stop: {method: pbt, interval: 1, max: 3}
    parallel-tasks:
      - name: act=<act> lr=<lr>
        cmd: train --act <act> --lr <lr> --ckpt ck/<lr>
        checkpoint: ck/<lr>
        sample: {act: [relu, '$(touch x)'], lr: [CK1, CK2, CK3]}
        trials: 3
`
	trial := mustLoadYAML(t, sweep, LoadOptions{}).Tasks[0].Parallel[0]
	v := trial.Variant([]Param{{Name: "act", Value: "$(touch x)"}, {Name: "lr", Value: "CK9"}})
	if want := `train --act "${RUNALL_PARAM_act}" --lr "${RUNALL_PARAM_lr}" --ckpt ` + trial.Checkpoint.Dir; v.Cmd != want {
		t.Errorf("variant runs %q, want %q", v.Cmd, want)
	}
	for _, bad := range []string{"'a;b'", "'a b'", "'../x'"} {
		_, err := loadYAML(t, strings.Replace(sweep, "[CK1, CK2, CK3]", "[CK1, CK2, "+bad+"]", 1), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "sample: ") {
			t.Errorf("a choice %s pbt could move a trial's checkpoint directory to: got %v, want it refused", bad, err)
		}
	}
}

// TestRefsAsPlaceholders: a path that names a param's variable itself is checked as one with
// its placeholder; another variable whose name starts the same is not the param's.
func TestRefsAsPlaceholders(t *testing.T) {
	params := []Param{{Name: "v", Value: "x"}, {Name: "a.b", Value: "y"}}
	for in, want := range map[string]string{
		"ck/${RUNALL_PARAM_v}":                 "ck/<v>",
		"ck/$RUNALL_PARAM_v/x":                 "ck/<v>/x",
		"ck/$RUNALL_PARAM_v":                   "ck/<v>",
		"ck/$RUNALL_PARAM_vv-$HOME":            "ck/$RUNALL_PARAM_vv-$HOME",
		"ck/$RUNALL_PARAM_a_b.$RUNALL_PARAM_v": "ck/<a.b>.<v>",
	} {
		if got := refsAsPlaceholders(in, params); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
