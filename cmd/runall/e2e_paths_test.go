package main_test

// End-to-end tests of issue 34's paths made from the task file and from values from outside
// it: runall check and the run both refuse, before anything runs, and the victim is left.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pathsE2E is an e2e whose working directory holds a victim file, with HOME and PWD there.
func pathsE2E(t *testing.T) *e2e {
	e := newE2E(t)
	e.env = append(e.env, "HOME="+e.dir, "PWD="+e.dir)
	e.writeFile("victim.txt", "keep me\n")
	return e
}

// refusedTwice runs check and then the run on tasks.yml (the log directory .runall/logs): each exits 2 saying want, and
// nothing ran (no ran file), the victim kept.
func (e *e2e) refusedTwice(what, want string) {
	e.t.Helper()
	for _, args := range [][]string{{"check", "tasks.yml"}, {"tasks.yml"}} {
		r := e.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			e.t.Errorf("%s: runall %s: exit %d, want 2 saying %q\n%v", what, args[0], r.code, want, r)
		}
	}
	if e.exists("ran") || !e.exists("tasks.yml") || e.read("victim.txt") != "keep me\n" {
		e.t.Errorf("%s: a trial ran, or the working directory lost its files", what)
	}
}

// TestCheckpointSpellingsRefusedByCheckAndRun (issue 34, rule 1, second bullet): runall
// check passed other spellings of the working directory and $HOME, and the run emptied it
// before the first attempt, the task file and .runall/ included.
func TestCheckpointSpellingsRefusedByCheckAndRun(t *testing.T) {
	t.Parallel()
	e := pathsE2E(t)
	base := filepath.Base(e.dir)
	for _, dir := range []string{"../" + base, "${PWD}", e.dir, "ck/../../" + base, "${HOME}", ".runall/logs/state/checkpoints/t", ".runall"} {
		e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - {cmd: 'touch ran', checkpoint: '"+dir+"'}\n")
		want := "tasks.yml:3:28: checkpoint: " + dir + ": "
		e.refusedTwice("checkpoint: "+dir, want)
	}
}

// TestSampleValueLeavingPathRefusedByCheckAndRun (issue 34, rule 1, third bullet): a sample:
// value in checkpoint: ck/<v> chose the directory runall emptied, one in log-path: the file
// it appended to.
func TestSampleValueLeavingPathRefusedByCheckAndRun(t *testing.T) {
	t.Parallel()
	e := pathsE2E(t)
	if err := os.MkdirAll(e.path("ck"), 0o755); err != nil {
		t.Fatal(err)
	}
	for key, line := range map[string]string{"checkpoint": "checkpoint: ck/<v>", "log-path": "log-path: logs/<v>"} {
		e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - cmd: touch ran\n        "+line+
			"\n        sample: {v: ['../victim.txt']}\n        trials: 1\n")
		e.refusedTwice(key, `sample: `+key+`: `+strings.TrimPrefix(line, key+": ")+`: param v = "../victim.txt" makes a / where its placeholder stands`)
	}
}

// TestUnfilledEnvPlaceholderRefusedByCheckAndRun (issue 34, rule 5): env: {WIDTH: "<width>"}
// with no width anywhere passed check and ran with the text <width>.
func TestUnfilledEnvPlaceholderRefusedByCheckAndRun(t *testing.T) {
	t.Parallel()
	e := pathsE2E(t)
	e.writeFile("tasks.yml", "tasks:\n  - cmd: touch ran\n    env: {WIDTH: '<width>'}\n")
	e.refusedTwice("env", "tasks.yml:2:5: env: WIDTH: <width> is a placeholder that no for-each, matrix or sample fills")
}

// TestCheckpointLinkRefusedByCheckAndRun: a checkpoint: that is itself a symbolic link (to
// a directory elsewhere) was never looked inside, and a resume replaced the link with a
// directory; check and the run refuse it, naming it and what to do, and leave the link and
// what it leads to as they are.
func TestCheckpointLinkRefusedByCheckAndRun(t *testing.T) {
	t.Parallel()
	e := pathsE2E(t)
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "model.bin"), []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, e.path("ck")); err != nil {
		t.Fatal(err)
	}
	e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - {cmd: 'touch ran', checkpoint: 'ck'}\n")
	e.refusedTwice("checkpoint: ck", "tasks.yml:3:28: checkpoint: ck: "+e.path("ck")+" is a symbolic link (to "+elsewhere+")")
	if target, err := os.Readlink(e.path("ck")); err != nil || target != elsewhere {
		t.Errorf("the link is now %q, %v; want it as it was", target, err)
	}
	if b, err := os.ReadFile(filepath.Join(elsewhere, "model.bin")); err != nil || string(b) != "weights" {
		t.Errorf("what the link leads to: %q, %v", b, err)
	}
}
