package main_test

import (
	"slices"
	"strings"
	"testing"
)

// TestUnsetVariableDeletesBucket: an upload with delete: true to s3://bucket/${RUN_PREFIX}
// with RUN_PREFIX unset would sync to the bucket's root and delete everything else. check
// exits 2 naming the file, line, column and variable; run refuses the same way before any
// task or transfer; with the variable set, only its prefix changes.
func TestUnsetVariableDeletesBucket(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	s.srv.Put(t, s.bucket, "other-team/model.bin", []byte("keep me"))
	s.writeFile("tasks.yml", `s3:
  upload:
    - {from: out/, to: "s3://${BUCKET}/${RUN_PREFIX}", delete: true}
tasks:
  - cmd: mkdir -p out && echo hi > out/a.txt && touch ran
`)
	r := s.run("check", "tasks.yml")
	r.wantCode(t, 2)
	if !strings.Contains(r.stderr, "tasks.yml:3:24: s3: upload: to: ${RUN_PREFIX} is unset or empty") {
		t.Errorf("check does not name the place and the variable\n%v", r)
	}
	r = s.run("--log-dir", "logs", "tasks.yml")
	r.wantCode(t, 2)
	if s.exists("ran") || !strings.Contains(r.stderr, "${RUN_PREFIX}") {
		t.Errorf("the run did not refuse before its task\n%v", r)
	}
	if keys := s.keys(""); !slices.Equal(keys, []string{"other-team/model.bin"}) {
		t.Errorf("the bucket holds %q", keys)
	}

	r = s.withEnv("RUN_PREFIX=runs/1").run("--log-dir", "logs", "tasks.yml")
	r.wantCode(t, 0)
	s.wantObject("other-team/model.bin", "keep me")
	s.wantObject("runs/1/a.txt", "hi\n")
}
