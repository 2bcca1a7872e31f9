package main_test

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSyncKeepsTheGuards: runall sync keeps the task file's guards on --delete: to a
// bucket's root it needs --whole-bucket (it deleted a whole bucket), into / it is refused
// before anything is walked (--dry-run walked /), and a URL an unset variable left empty
// (s3://b/$RUN_ID/) is refused, also when a task calls the CLI itself.
func TestSyncKeepsTheGuards(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	s.srv.Put(t, s.bucket, "other-team/model.bin", []byte("keep me"))
	if err := os.MkdirAll(s.path("out"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.writeFile("out/a.txt", "a")
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"sync", "--delete", "out/", "s3://" + s.bucket + "/"}, "would delete every object of the bucket not in out/"},
		{[]string{"sync", "--delete", "out/", "s3://" + s.bucket}, "would delete every object of the bucket"},
		{[]string{"sync", "--delete", "--dry-run", "s3://" + s.bucket + "/", "/"}, "would delete every file of the filesystem"},
		{[]string{"sync", "--delete", "out/", "s3://" + s.bucket + "//"}, "an empty path segment, as an unset variable leaves"},
		{[]string{"sync", "--delete", "s3://" + s.bucket + "/x//", "in/"}, "an empty path segment"},
	} {
		r := s.run(tc.args...)
		r.wantCode(t, 2)
		if !strings.Contains(r.stderr, tc.say) {
			t.Errorf("%q does not say %q\n%v", tc.args, tc.say, r)
		}
	}
	if keys := s.keys(""); !slices.Equal(keys, []string{"other-team/model.bin"}) {
		t.Errorf("the bucket holds %q", keys)
	}

	// A task that calls the CLI with a variable of its own unset fails, and deletes nothing.
	s.writeFile("tasks.yml", `tasks:
  - cmd: '"$RUNALL_BIN" sync --delete out/ "s3://$BUCKET/$RUN_ID/"'
`)
	r := s.withEnv("RUNALL_BIN="+runallBin).run("--log-dir", "logs", "tasks.yml")
	r.wantCode(t, 1)
	if keys := s.keys(""); !slices.Equal(keys, []string{"other-team/model.bin"}) || !strings.Contains(r.stdout, "an empty path segment") {
		t.Errorf("the bucket holds %q\n%v", keys, r)
	}

	// --whole-bucket says it is meant.
	s.run("sync", "--delete", "--whole-bucket", "out/", "s3://"+s.bucket+"/").wantCode(t, 0)
	if keys := s.keys(""); !slices.Equal(keys, []string{"a.txt"}) {
		t.Errorf("with --whole-bucket the bucket holds %q, want only a.txt", keys)
	}
}
