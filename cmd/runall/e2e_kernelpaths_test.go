package main_test

// End-to-end tests of issue 42, point 1: paths are judged as the kernel resolves them.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// linkedE2E is an e2e whose working directory is a link, base/link to base/real/deep, with
// PWD the link (as under a shell that cd'd there); it returns base.
func linkedE2E(t *testing.T) (*e2e, string) {
	e := newE2E(t)
	base := e.dir
	deep := filepath.Join(base, "real", "deep")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	e.dir = filepath.Join(base, "link")
	e.env = append(e.env, "HOME="+filepath.Join(base, "home"), "PWD="+e.dir)
	return e, base
}

// TestCheckpointUnderLinkedWorkingDirectory (issue 42, point 1, second bullet): under a
// working directory that is a link, checkpoint: ../sub names base/real/sub, where the trial
// writes; check, the run and --fresh judge and empty that directory, not base/sub (the
// text's), which keeps its file; and ../deep, the working directory itself by the kernel, is
// refused by check and the run.
func TestCheckpointUnderLinkedWorkingDirectory(t *testing.T) {
	t.Parallel()
	e, base := linkedE2E(t)
	write := func(path, body string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(base, "sub", "precious.txt"), "keep me\n")     // the text's ../sub: not the trial's
	write(filepath.Join(base, "real", "sub", "old.bin"), "an old run") // the trial's own, to be emptied by --fresh
	e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - {cmd: 'echo w > ../sub/model.bin', checkpoint: '../sub'}\n")
	e.run("check", "tasks.yml").wantCode(t, 0)
	e.run("--fresh", "--log-dir", "logs", "tasks.yml").wantCode(t, 0)
	if b, err := os.ReadFile(filepath.Join(base, "sub", "precious.txt")); err != nil || string(b) != "keep me\n" {
		t.Errorf("base/sub/precious.txt, the text's ../sub, is %q, %v: want it kept", b, err)
	}
	if _, err := os.Stat(filepath.Join(base, "real", "sub", "old.bin")); err == nil {
		t.Error("--fresh left the trial's own directory (base/real/sub) as it was")
	}
	if _, err := os.Stat(filepath.Join(base, "real", "sub", "model.bin")); err != nil {
		t.Errorf("the trial's save: %v", err)
	}

	e.writeFile("victim.txt", "keep me\n")
	e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - {cmd: 'touch ran', checkpoint: '../deep'}\n")
	e.refusedTwice("checkpoint: ../deep", "checkpoint: ../deep: "+filepath.Join(base, "real", "deep")+" is runall's working directory")
}

// TestPathKeysUnderLinkedWorkingDirectory (issue 42, point 1, second bullet): under a
// working directory that is a link, cwd: ../w runs the command in base/real/w, log-path:
// ../logs/t.log appends to base/real/logs/t.log and metrics: (against the cwd) is read where
// the command wrote it, as the kernel resolves each ".." after the link; base/w and
// base/logs, the text's, are left empty.
func TestPathKeysUnderLinkedWorkingDirectory(t *testing.T) {
	t.Parallel()
	e, base := linkedE2E(t)
	for _, d := range []string{"w", "logs", "real/w", "real/logs", "real/m", "m"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.writeFile("tasks.yml", `tasks:
  - cmd: 'pwd -P > here.txt && echo "{\"acc\": 0.5}" > ../m/metrics.json && echo said'
    cwd: ../w
    log-path: ../logs/t.log
    metrics: ../m/metrics.json
`)
	e.run("--log-dir", "logs", "--results", "results.json", "tasks.yml").wantCode(t, 0)
	for _, p := range []string{"real/w/here.txt", "real/logs/t.log", "real/m/metrics.json"} {
		if _, err := os.Stat(filepath.Join(base, p)); err != nil {
			t.Errorf("base/%s: %v", p, err)
		}
	}
	for _, d := range []string{"w", "logs", "m"} {
		if ents, _ := os.ReadDir(filepath.Join(base, d)); len(ents) != 0 {
			t.Errorf("base/%s, the text's, holds %v: want it left empty", d, ents)
		}
	}
	var res struct {
		Tasks []struct{ Metrics map[string]float64 }
	}
	if b, err := os.ReadFile(e.path("results.json")); err != nil || json.Unmarshal(b, &res) != nil || len(res.Tasks) != 1 || res.Tasks[0].Metrics["acc"] != 0.5 {
		t.Errorf("results' tasks: %+v, %v: want acc 0.5, read from the metrics file", res.Tasks, err)
	}
}
