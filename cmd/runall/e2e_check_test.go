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

// TestGPUSharingProgressRefused: gpu-sharing: progress is parsed but not yet wired into
// admission, so check and run both refuse it at its place (exit 2) rather than pack by
// memory in silence; memory is accepted.
func TestGPUSharingProgressRefused(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - {cmd: echo ran, gpu-memory: 1GiB, gpu-sharing: progress}\n")
	for _, args := range [][]string{{"check", "tasks.yml"}, {"--fake-gpus", "1x8GiB", "tasks.yml"}} {
		r := e.run(args...)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, "tasks.yml:3:56: gpu-sharing: progress is not wired into this build's admission yet") ||
			strings.Contains(r.stdout, "ran") {
			t.Errorf("runall %v did not refuse gpu-sharing: progress\n%v", args, r)
		}
	}
	e.writeFile("tasks.yml", "tasks:\n  - parallel-tasks:\n      - {cmd: echo ran, gpu-memory: 1GiB, gpu-sharing: memory}\n")
	e.run("check", "tasks.yml").wantCode(t, 0)
}
