package main_test

import (
	"strings"
	"testing"
)

// TestCheckFlagsAfterFile: check takes flags after FILE, as run does (check FILE --tags x
// took --tags and x as $1 and $2, in silence); after -- they are arguments.
func TestCheckFlagsAfterFile(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeFile("tasks.yml", "tasks:\n  - cmd: echo \"[$1]\"\n    tags: [x]\n  - cmd: echo other\n")
	r := e.run("check", "tasks.yml", "--tags", "x")
	r.wantCode(t, 0)
	if strings.Contains(r.stdout, "echo other") || !strings.Contains(r.stdout, `echo "[$1]"`) {
		t.Errorf("check FILE --tags x did not filter by tag\n%v", r)
	}
	r = e.run("check", "tasks.yml", "--", "--tags", "x")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, `echo "[--tags]"`) || !strings.Contains(r.stdout, "echo other") {
		t.Errorf("after --, --tags is an argument\n%v", r)
	}
}

// TestGPUSharingProgressAccepted: gpu-sharing: progress is wired into admission, so check
// and a run on simulated GPUs accept it (this build refused it before it was wired).
func TestGPUSharingProgressAccepted(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - {cmd: echo ran, gpu-memory: 1GiB, gpu-sharing: progress}\n")
	e.run("check", "tasks.yml").wantCode(t, 0)
	r := e.run("--fake-gpus", "1x8GiB", "tasks.yml")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "ran") {
		t.Errorf("runall did not run the trial that shares by progress\n%v", r)
	}
}
