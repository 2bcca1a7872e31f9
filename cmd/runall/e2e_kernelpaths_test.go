package main_test

// End-to-end tests of issue 42, point 1: paths are judged as the kernel resolves them.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// TestDestinationIsNotItsSource (issue 42, point 1, third bullet): --results that reaches
// the task file or a file it includes (by its name, a link, a ".." after a link) and
// report -o that reaches the results it reads are refused with exit 2 before anything runs
// or is written, and the source keeps its bytes; a name that only reads like it is let be.
func TestDestinationIsNotItsSource(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	task := "tasks:\n  - $include: inc.yml\n  - cmd: touch ran\n"
	e.writeFile("tasks.yml", task)
	e.writeFile("inc.yml", "- cmd: echo included\n")
	for _, d := range []string{"real/deep", "real/logs"} {
		if err := os.MkdirAll(e.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link.yml": "tasks.yml", "here": ".", "deep": e.path("real/deep")} {
		if err := os.Symlink(target, e.path(link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, results := range []string{"tasks.yml", "link.yml", "here/tasks.yml", "deep/../../tasks.yml", "./inc.yml", e.dir + "/here/inc.yml"} {
		r := e.run("--log-dir", "logs", "--results", results, "tasks.yml")
		if r.code != 2 || !strings.Contains(r.stderr, "is a file this command reads") {
			t.Errorf("--results %s: exit %d, want 2 saying it is a file runall reads\n%v", results, r.code, r)
		}
		if e.read("tasks.yml") != task || e.read("inc.yml") != "- cmd: echo included\n" || e.exists("ran") {
			t.Fatalf("--results %s: the task file was written over, or a task ran", results)
		}
	}
	e.run("--log-dir", "logs", "--results", "deep/../tasks.yml", "tasks.yml").wantCode(t, 0) // real/tasks.yml
	if e.read("tasks.yml") != task || !e.exists("real/tasks.yml") {
		t.Error("--results deep/../tasks.yml did not land in real/, as the kernel takes it")
	}
	results := e.read("logs/latest/results.json")
	for _, out := range []string{"logs/latest/results.json", "logs/latest/gpu-samples.jsonl", "here/logs/latest/results.json"} {
		r := e.run("report", "logs", "-o", out)
		if r.code != 2 || !strings.Contains(r.stderr, "is a file this command reads") {
			t.Errorf("report logs -o %s: exit %d, want 2 saying it is a file report reads\n%v", out, r.code, r)
		}
	}
	r := e.run("report", "real/tasks.yml", "-o", "deep/../tasks.yml")
	if r.code != 2 || !strings.Contains(r.stderr, "is a file this command reads") {
		t.Errorf("report real/tasks.yml -o deep/../tasks.yml: exit %d, want 2\n%v", r.code, r)
	}
	if e.read("logs/latest/results.json") != results {
		t.Error("the results report read were written over")
	}
}

// TestResultsThroughDanglingLinkRefused (issue 42, point 1, third bullet): --results L and
// report -o L, L a link to a file in a directory that does not exist, are refused with exit
// 2 naming where L leads, and the directory is not made (the write would have made it).
func TestResultsThroughDanglingLinkRefused(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeFile("tasks.yml", "tasks:\n  - cmd: touch ran\n")
	victim := t.TempDir()
	if err := os.Symlink(filepath.Join(victim, "made", "by", "runall", "r.json"), e.path("L")); err != nil {
		t.Fatal(err)
	}
	e.run("--log-dir", "logs", "tasks.yml").wantCode(t, 0)
	os.Remove(e.path("ran"))
	for _, args := range [][]string{{"--log-dir", "logs", "--results", "L", "tasks.yml"}, {"report", "logs", "-o", "L"}} {
		r := e.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, "directory does not exist: "+filepath.Join(victim, "made", "by", "runall")) {
			t.Errorf("%v: exit %d, want 2 naming the directory L leads to\n%v", args, r.code, r)
		}
	}
	if _, err := os.Stat(filepath.Join(victim, "made")); err == nil {
		t.Error("a directory L leads to was made")
	}
	if e.exists("ran") {
		t.Error("the task ran")
	}
}
