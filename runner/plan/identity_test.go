package plan

import (
	"strings"
	"testing"
)

// TestTrialIsWhatItDoes: a trial's Key changes with everything that changes what it does
// (under --claims, two files differing in a trial's env: or timeout: were taken for the
// same sweep, as only names and commands were hashed), and not with what only changes where
// it is written or how it is shown.
func TestTrialIsWhatItDoes(t *testing.T) {
	const base = `
tasks:
  - name: sweep
    parallel-tasks:
      - name: train
        cmd: python train.py
        env: {DATA: /data/a}
        timeout: 1h
`
	key := func(text string) string {
		t.Helper()
		p := mustLoadYAML(t, text, LoadOptions{})
		return p.Tasks[len(p.Tasks)-1].Parallel[0].Key
	}
	was := key(base)
	with := func(line string) string {
		return strings.Replace(base, "        timeout: 1h\n", "        timeout: 1h\n"+line+"\n", 1)
	}
	for _, tc := range []struct {
		what, file string
		same       bool
	}{
		{"env", strings.Replace(base, "/data/a", "/data/b", 1), false},
		{"timeout", strings.Replace(base, "1h", "2h", 1), false},
		{"cmd", strings.Replace(base, "train.py", "train2.py", 1), false},
		{"name", strings.Replace(base, "name: train", "name: train2", 1), false},
		{"cwd", with("        cwd: /work"), false},
		{"retries", with("        retries: 2"), false},
		{"gpu-memory", with("        gpu-memory: 4GiB"), false},
		{"gpus", with("        gpus: 2"), false},
		{"gpu-memory-cap", with("        gpu-memory: 4GiB\n        gpu-memory-cap: true"), false},
		{"memory", with("        memory: 2GiB"), false},
		{"metrics", with("        metrics: m.json"), false},
		{"upload", with("        upload: [{from: out/, to: 's3://b/x/'}]"), false},
		{"sudo", with("        sudo: true"), false},
		{"steps", strings.Replace(base, "        cmd: python train.py\n", "        tasks: [{cmd: python train.py}, {cmd: eval}]\n", 1), false},
		{"the block's env", strings.Replace(base, "  - name: sweep\n", "  - name: sweep\n    env: {SEED: '1'}\n", 1), false},
		{"a line inserted before", strings.Replace(base, "tasks:\n", "tasks:\n  - cmd: echo setup\n", 1), true},
		{"tags", with("        tags: [x]"), true},
		{"log-path", with("        log-path: train.log"), true},
		{"show-output", with("        show-output: true"), true},
		{"ignore-failure", with("        ignore-failure: true"), true},
	} {
		if got := key(tc.file); (got == was) != tc.same {
			t.Errorf("%s: key %s, before %s; want the same: %v", tc.what, got, was, tc.same)
		}
	}
}

// TestCopiesAreTrialsApart: copies of one task whose params differ only outside their name
// and command, and a sampler's trials with one number and other params, are other trials.
func TestCopiesAreTrialsApart(t *testing.T) {
	m := mustLoadYAML(t, `
tasks:
  - name: sweep
    parallel-tasks:
      - name: lr=<lr>
        cmd: train --lr <lr>
        env: {SEED: "<seed>"}
        matrix: {lr: [1, 2], seed: [1, 2]}
`, LoadOptions{})
	seen := map[string]bool{}
	for _, c := range m.Tasks[0].Parallel {
		if seen[c.Key] {
			t.Errorf("%s: key %s is another trial's: a param outside the name and command differs", c.Name, c.Key)
		}
		seen[c.Key] = true
	}

	tmpl := mustLoadYAML(t, `
config: {objective: {metric: acc, mode: max}}
tasks:
  - name: sweep
    parallel-tasks:
      - name: x
        cmd: train
        env: {LR: "<lr>"}
        search: {ask: a, tell: b}
        trials: 2
`, LoadOptions{}).Tasks[0].Parallel[0]
	a, _ := tmpl.Instantiate(1, []Param{{Name: "lr", Value: "1"}})
	b, _ := tmpl.Instantiate(1, []Param{{Name: "lr", Value: "2"}})
	if a.Key == b.Key {
		t.Errorf("asked trials with the same number and other params share the key %s", a.Key)
	}
}
