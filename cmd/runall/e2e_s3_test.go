package main_test

// End-to-end tests of runall's S3 sync (downloads before the tasks, uploads during and
// after them, resume markers), its sharding, its secret masking and its metrics, against
// the real MinIO server the package shares (see TestMain).

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/runall/runall/internal/eventually"
	"github.com/runall/runall/internal/miniotest"
)

// s3E2E is a scratch working directory whose runall reaches the shared MinIO, with a
// bucket of the test's own in $BUCKET.
type s3E2E struct {
	*e2e
	srv    *miniotest.Server
	bucket string
}

func newS3E2E(t *testing.T) *s3E2E {
	t.Helper()
	srv := miniotest.Shared(t)
	e := newE2E(t)
	bucket := srv.NewBucket(t)
	// The sync records go in a cache of the test's own: a skip must not depend on what
	// another test or an earlier run left in ~/.cache.
	e.env = append(withoutAWS(e.env), srv.Env()...)
	e.env = append(e.env, "BUCKET="+bucket, "XDG_CACHE_HOME="+t.TempDir())
	return &s3E2E{e2e: e, srv: srv, bucket: bucket}
}

// withoutAWS drops the AWS configuration of whoever runs the tests (a profile, a region,
// credentials), so that only the server's applies.
func withoutAWS(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(strings.ToUpper(kv), "AWS_")
	})
}

// withEnv returns a copy of the working directory's runall with more environment variables.
func (e *e2e) withEnv(kv ...string) *e2e {
	c := *e
	c.env = append(slices.Clone(e.env), kv...)
	return &c
}

// get reads an object of the test's bucket; ok is false when there is none.
func (s *s3E2E) get(key string) (body string, ok bool) {
	s.t.Helper()
	return getObject(s.t, s.srv, s.bucket, key)
}

func getObject(t *testing.T, srv *miniotest.Server, bucket, key string) (body string, ok bool) {
	t.Helper()
	var err error
	// A GET of an object whose upload a killed runall left half sent waits on MinIO's lock of
	// it until MinIO gives that upload up: under -race on a loaded machine one such GET ran
	// past 30 s (CI). A GET that times out is made again, three times at most.
	for range 3 {
		if body, ok, err = getObjectOnce(srv, bucket, key); err == nil || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	if err != nil {
		t.Fatalf("get s3://%s/%s: %v", bucket, key, err)
	}
	return body, ok
}

func getObjectOnce(srv *miniotest.Server, bucket, key string) (body string, ok bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := srv.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	var noKey *types.NoSuchKey
	if errors.As(err, &noKey) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// wantObject fails the test unless the bucket holds key with this body.
func (s *s3E2E) wantObject(key, body string) {
	s.t.Helper()
	got, ok := s.get(key)
	switch {
	case !ok:
		s.t.Errorf("s3://%s/%s does not exist; the bucket holds %q", s.bucket, key, s.keys(""))
	case got != body:
		s.t.Errorf("s3://%s/%s = %q, want %q", s.bucket, key, got, body)
	}
}

// keys lists the bucket's keys under prefix, sorted.
func (s *s3E2E) keys(prefix string) []string {
	s.t.Helper()
	return listKeys(s.t, s.srv, s.bucket, prefix)
}

func listKeys(t *testing.T, srv *miniotest.Server, bucket, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var keys []string
	p := s3.NewListObjectsV2Paginator(srv.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("list s3://%s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	slices.Sort(keys)
	return keys
}

// tarGz makes a .tar.gz of files (name: content).
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// createFile creates an empty file in the working directory: how tests release waiting tasks.
func (e *e2e) createFile(name string) {
	e.t.Helper()
	if err := os.WriteFile(e.path(name), nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func TestS3DownloadBeforeTasks(t *testing.T) {
	t.Parallel()
	t.Run("a prefix and an archive land before the first task", func(t *testing.T) {
		t.Parallel()
		s := newS3E2E(t)
		s.srv.Put(t, s.bucket, "data/a.txt", []byte("a\n"))
		s.srv.Put(t, s.bucket, "data/sub/b.txt", []byte("b\n"))
		s.srv.Put(t, s.bucket, "elsewhere/not-this.txt", []byte("no\n"))
		s.srv.Put(t, s.bucket, "archive.tar.gz", tarGz(t, map[string]string{"top.txt": "top\n", "inner/c.txt": "c\n"}))

		r := s.runFile("s3/download.yml")
		r.wantCode(t, 0)
		want := "data/a.txt\ndata/sub/b.txt\nunpacked/inner/c.txt\nunpacked/top.txt\n"
		if got := s.read("listing.txt"); got != want {
			t.Errorf("the first task saw\n%s\nwant\n%s\n%v", got, want, r)
		}
		if got := s.read("unpacked/inner/c.txt"); got != "c\n" {
			t.Errorf("unpacked/inner/c.txt = %q, want %q", got, "c\n")
		}
	})
	t.Run("a missing object: nothing runs", func(t *testing.T) {
		t.Parallel()
		s := newS3E2E(t)
		r := s.runFile("s3/download-missing.yml")
		if r.code == 0 {
			t.Fatalf("exit code 0 after a failed download\n%v", r)
		}
		if s.exists("never.done") {
			t.Error("a task ran although the download failed")
		}
		want := "s3://" + s.bucket + "/no-such-archive.tar.gz"
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the error does not name %s\n%v", want, r)
		}
		if st := s.results().task(t, "never").Status; st != "skipped" {
			t.Errorf("task never: status %s, want skipped", st)
		}
	})
}

func TestS3UploadAfterTasks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		code int
	}{
		{"all tasks ok", nil, 0},
		{"the last task failed", []string{"FAIL=3"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newS3E2E(t)
			r := s.withEnv(tc.env...).runFile("s3/upload.yml")
			r.wantCode(t, tc.code)
			s.wantObject("run/one.txt", "one\n")
			s.wantObject("run/two.txt", "two\n")
		})
	}
}

// TestS3UploadWhenTaskEnds: a task's own upload: runs when it ends. A setup task's and a
// finished trial's objects are in the bucket while a sibling trial still runs, and the
// sibling's is not (it uploads when it ends, not before).
func TestS3UploadWhenTaskEnds(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	p := s.start("--log-dir", "logs", "--results", "results.json", testdata("s3/upload-trial.yml"))
	t.Cleanup(func() { _ = os.WriteFile(s.path("release"), nil, 0o644) }) // a failed test leaves no task waiting
	eventually.True(t, "quick's upload while waits still runs", func() bool {
		_, ok := s.get("tasks/quick/done.txt")
		return ok
	})
	s.wantObject("tasks/setup/done.txt", "setup\n")
	// waits cannot end before the test creates "release"; so far it may only have started.
	eventually.True(t, "waits to start", func() bool { return s.exists("out/waits/done.txt") })
	if _, ok := s.get("tasks/waits/done.txt"); ok {
		t.Error("waits's upload ran before waits ended")
	}
	s.createFile("release")
	r := p.wait()
	r.wantCode(t, 0)
	s.wantObject("tasks/waits/done.txt", "waits\n")
}

// TestS3TrialUploadFails (issue 42, point 3): a trial's own upload that fails fails the run
// (exit 1, status failed), as a file-level upload's does: the trial stays ok, its record says
// what did not land (upload_errors), no resume marker says it is done, and the summary says
// so. Its sibling, whose upload landed, has none and is marked done.
func TestS3TrialUploadFails(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	r := s.runFile("s3/upload-fails.yml")
	r.wantCode(t, 1)
	s.wantObject("tasks/lands/done.txt", "lands\n")
	var res struct {
		Schema int    `json:"schema"`
		Status string `json:"status"`
		Tasks  []struct {
			Name         string   `json:"name"`
			Status       string   `json:"status"`
			UploadErrors []string `json:"upload_errors"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(s.read("results.json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Schema != 3 || res.Status != "failed" {
		t.Errorf("results: schema %d, status %s; want 3, failed\n%v", res.Schema, res.Status, r)
	}
	for _, tr := range res.Tasks {
		lost := tr.Name == "lost"
		if tr.Status != "ok" || lost != (len(tr.UploadErrors) == 1 && strings.Contains(tr.UploadErrors[0], "upload out/lost/: ")) {
			t.Errorf("%s: %s, upload_errors %q; want ok, with its failed upload only for lost", tr.Name, tr.Status, tr.UploadErrors)
		}
	}
	if !strings.Contains(r.stdout, "lost: its upload failed") {
		t.Errorf("the summary does not say lost's upload failed\n%v", r)
	}
	if got := len(listKeys(t, s.srv, s.bucket, "tasks/lands/.runall-done/")); got != 1 {
		t.Errorf("%d resume markers for lands, want 1", got)
	}
}

// TestS3PeriodicUpload: with every: 1s, a file written early by a long task is in the
// bucket while the task still runs.
func TestS3PeriodicUpload(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	p := s.start("--log-dir", "logs", testdata("s3/upload-periodic.yml"))
	t.Cleanup(func() { _ = os.WriteFile(s.path("release"), nil, 0o644) }) // a failed test leaves no task waiting
	eventually.True(t, "the periodic upload of out/early.txt", func() bool {
		_, ok := s.get("periodic/early.txt")
		return ok
	})
	s.createFile("release")
	p.wait().wantCode(t, 0)
	s.wantObject("periodic/early.txt", "early\n")
}

// TestS3UploadAfterSIGTERM: a stopped run still uploads what its task wrote.
func TestS3UploadAfterSIGTERM(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	p := s.start("--log-dir", "logs", "--grace", "5s", testdata("s3/sigterm.yml"))
	eventually.True(t, "the task to write its checkpoint", func() bool { return s.exists("pid") })
	pids := pidsIn(t, s.path("pid"))
	killOnCleanup(t, pids)
	p.signal(syscall.SIGTERM)
	r := p.wait()
	r.wantCode(t, 143)
	wantGone(t, "the stopped task", pids)
	s.wantObject("ckpt/step-1.pt", "step-1\n")
	if s.exists("never.done") {
		t.Error("a task started after SIGTERM")
	}
}

// TestS3SecretsNeverWritten: a task prints the credentials and its whole environment; no
// credential value appears in anything runall writes.
func TestS3SecretsNeverWritten(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"plain", "json"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := newS3E2E(t)
			r := s.run("--output", mode, "--log-dir", "logs", "--results", "results.json", testdata("s3/secrets.yml"))
			r.wantCode(t, 1) // "leaky trial" fails, so that the failure report shows its output
			secrets := []string{s.srv.SecretKey, s.srv.AccessKey, "task-file-secret-value"}
			outputs := map[string]string{"stdout": r.stdout, "stderr": r.stderr, "results.json": s.read("results.json")}
			err := filepath.WalkDir(s.path("logs"), func(path string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				b, err := os.ReadFile(path)
				outputs[path] = string(b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(outputs) < 5 { // stdout, stderr, results, two task logs at least
				t.Errorf("only %d outputs to check: %q", len(outputs), slices.Sorted(maps.Keys(outputs)))
			}
			for name, out := range outputs {
				for _, secret := range secrets {
					if strings.Contains(out, secret) {
						t.Errorf("%s contains the credential %q:\n%s", name, secret, out)
					}
				}
			}
			// The task did print them, masked.
			if !strings.Contains(r.stdout, "secret=****") || !strings.Contains(r.stdout, "own=****") || !strings.Contains(r.stdout, "in a trial ****") {
				t.Errorf("stdout lacks the masked lines\n%v", r)
			}
			s.wantObject("secrets/data.txt", "data\n")
		})
	}
	t.Run("wrong credentials", func(t *testing.T) {
		t.Parallel()
		s := newS3E2E(t)
		s.srv.Put(t, s.bucket, "data/a.txt", []byte("a\n"))
		const key, secret = "WRONGKEYID1234", "wrong-secret-0123456789"
		r := s.withEnv("AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret).runFile("s3/download.yml")
		if r.code == 0 {
			t.Fatalf("exit code 0 with wrong credentials\n%v", r)
		}
		if !strings.Contains(r.stderr, "s3://"+s.bucket+"/data/") {
			t.Errorf("the error does not say what could not be downloaded\n%v", r)
		}
		for _, out := range []string{r.stdout, r.stderr, s.read("results.json")} {
			for _, v := range []string{key, secret} {
				if strings.Contains(out, v) {
					t.Errorf("the output contains the credential %q\n%v", v, r)
				}
			}
		}
		if s.exists("listing.txt") {
			t.Error("the task ran although the download failed")
		}
	})
}

// TestShard runs the three shards of a file at once, each told its shard another way: every
// trial runs exactly once, in shard k mod 3, and the setup tasks in every shard.
func TestShard(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = append(e.env, "SHARED="+e.dir)
	var procs []*proc
	for i, how := range []struct {
		env  []string
		args []string
	}{
		{args: []string{"--shard", "0/3"}},
		{env: []string{"RUNALL_SHARD=1/3"}},
		{env: []string{"JOB_COMPLETION_INDEX=2", "RUNALL_SHARDS=3"}},
	} {
		n := strconv.Itoa(i)
		args := append([]string{"--log-dir", "logs" + n, "--results", "results" + n + ".json"}, how.args...)
		procs = append(procs, e.withEnv(how.env...).start(append(args, testdata("s3/shard.yml"))...))
	}
	for _, p := range procs {
		p.wait().wantCode(t, 0)
	}

	var wantTrials, wantSetup []string
	for k := range 7 {
		wantTrials = append(wantTrials, "trial "+strconv.Itoa(k)+" "+strconv.Itoa(k%3)+"/3")
	}
	for _, task := range []string{"one", "two"} {
		for i := range 3 {
			wantSetup = append(wantSetup, "setup "+task+" "+strconv.Itoa(i)+"/3")
		}
	}
	if got := linesSorted(e.read("trials.txt")); !slices.Equal(got, wantTrials) {
		t.Errorf("trials run (name, shard):\n got %q\nwant %q", got, wantTrials)
	}
	if got := linesSorted(e.read("setup.txt")); !slices.Equal(got, wantSetup) {
		t.Errorf("setup tasks run (name, shard):\n got %q\nwant %q", got, wantSetup)
	}
	for i := range 3 {
		res := readResults(t, e.path("results"+strconv.Itoa(i)+".json"))
		want := []string{"setup one", "setup two"}
		for k := i; k < 7; k += 3 {
			want = append(want, "trial "+strconv.Itoa(k))
		}
		if got := res.names(); !slices.Equal(got, want) {
			t.Errorf("shard %d/3's results list %q, want %q", i, got, want)
		}
	}
}

func TestShardBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		msg  string
	}{
		{"--shard 3/3", []string{"--shard", "3/3"}, nil, `invalid shard "3/3"`},
		{"--shard 1/0", []string{"--shard", "1/0"}, nil, `invalid shard "1/0"`},
		{"RUNALL_SHARD=one", nil, []string{"RUNALL_SHARD=one"}, `invalid shard "one"`},
		{"RUNALL_SHARDS alone", nil, []string{"RUNALL_SHARDS=3"}, "RUNALL_SHARDS=3 is set but JOB_COMPLETION_INDEX is not"},
		{"JOB_COMPLETION_INDEX out of range", nil, []string{"JOB_COMPLETION_INDEX=3", "RUNALL_SHARDS=3"}, `invalid shard "3/3"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			e.env = append(e.env, "SHARED="+e.dir)
			r := e.withEnv(tc.env...).run(append(tc.args, "--log-dir", "logs", testdata("s3/shard.yml"))...)
			r.wantCode(t, 2)
			if !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("stderr lacks %q\n%v", tc.msg, r)
			}
			if e.exists("setup.txt") || e.exists("trials.txt") {
				t.Error("tasks ran")
			}
		})
	}
}

func linesSorted(s string) []string {
	l := lines(s)
	slices.Sort(l)
	return l
}

// TestResume: a rerun skips the trials an earlier run recorded as done; --fresh runs them
// again.
func TestResume(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	run := func(want int, flags ...string) result {
		t.Helper()
		_ = os.Remove(s.path("ran.txt"))
		r := s.runFile("s3/resume.yml", flags...)
		r.wantCode(t, want)
		return r
	}
	markers := func(trial string) []string {
		t.Helper()
		return s.keys("resume/" + trial + "/.runall-done/")
	}
	marker := regexp.MustCompile(`^resume/([abc])/\.runall-done/trial-([abc])-[0-9a-f]{16}\.json$`)

	// First run: b fails.
	s.createFile("fail-b")
	run(1)
	if got := linesSorted(s.read("ran.txt")); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("first run ran %q, want a, b, c", got)
	}
	for _, trial := range []string{"a", "c"} {
		keys := markers(trial)
		if len(keys) != 1 || marker.FindStringSubmatch(keys[0]) == nil || marker.FindStringSubmatch(keys[0])[2] != trial {
			t.Fatalf("trial %s succeeded; markers %q, want one like resume/%s/.runall-done/trial-%s-HASH.json", trial, keys, trial, trial)
		}
		body, _ := s.get(keys[0])
		var m struct{ Task string }
		if err := json.Unmarshal([]byte(body), &m); err != nil || m.Task != "trial "+trial {
			t.Errorf("marker %s = %s: want JSON naming the task", keys[0], body)
		}
	}
	if keys := markers("b"); len(keys) != 0 {
		t.Fatalf("trial b failed, yet it has markers %q", keys)
	}
	s.wantObject("resume/b/result.txt", "b\n") // a failed trial's outputs are kept

	// Second run: only b runs.
	if err := os.Remove(s.path("fail-b")); err != nil {
		t.Fatal(err)
	}
	r := run(0)
	if got := s.read("ran.txt"); got != "b\n" {
		t.Errorf("second run ran %q, want only b\n%v", lines(got), r)
	}
	if !strings.Contains(r.stdout, "done in an earlier run") {
		t.Errorf("the output does not say why a and c were skipped\n%v", r)
	}
	res := s.results()
	for _, trial := range []string{"trial a", "trial c"} {
		if tr := res.task(t, trial); tr.Status != "skipped" || !strings.Contains(tr.Reason, "done in an earlier run") {
			t.Errorf("%s: status %s (%q); want skipped, done in an earlier run", trial, tr.Status, tr.Reason)
		}
	}
	res.task(t, "trial b").want(t, "ok", 0, 1)
	if keys := markers("b"); len(keys) != 1 {
		t.Errorf("trial b succeeded; markers %q, want one", keys)
	}

	// --fresh: everything again.
	run(0, "--fresh")
	if got := linesSorted(s.read("ran.txt")); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("--fresh ran %q, want a, b, c", got)
	}
	for _, tr := range s.results().Tasks {
		tr.want(t, "ok", 0, 1)
	}
}

// TestResumeMarkersSurviveDelete: an upload with delete: true mirrors a directory onto a
// prefix that holds resume markers (the trials' own uploads go under it, and so do their
// markers). The markers are runall's, not the directory's: mirroring must keep them, or a
// rerun does everything again.
func TestResumeMarkersSurviveDelete(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	s.runFile("s3/resume-delete.yml").wantCode(t, 0)
	if got := linesSorted(s.read("ran.txt")); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("first run ran %q, want a, b, c", got)
	}
	var markers []string
	for _, k := range s.keys("mirror/") {
		if strings.Contains(k, "/.runall-done/") {
			markers = append(markers, k)
		}
	}
	if len(markers) != 3 {
		t.Errorf("after the run, the markers under s3://%s/mirror/ are %q, want one per trial (3); the bucket holds %q",
			s.bucket, markers, s.keys(""))
	}
	s.wantObject("mirror/a/result.txt", "a\n")

	if err := os.Remove(s.path("ran.txt")); err != nil {
		t.Fatal(err)
	}
	r := s.runFile("s3/resume-delete.yml")
	r.wantCode(t, 0)
	if s.exists("ran.txt") {
		t.Errorf("the rerun ran %q again; want every trial skipped as done\n%v", lines(s.read("ran.txt")), r)
	}
}

// TestMetrics scrapes --metrics-addr (--serve's old name) while a GPU trial runs, after an
// upload.
func TestMetrics(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	p := s.start("--log-dir", "logs", "--metrics-addr", "127.0.0.1:0", "--fake-gpus", "32GiB", testdata("s3/metrics.yml"))
	t.Cleanup(func() { _ = os.WriteFile(s.path("release"), nil, 0o644) }) // a failed test leaves no task waiting
	p.waitOutput("Prometheus metrics on http://")
	m := regexp.MustCompile(`Prometheus metrics on (http://\S+/metrics)`).FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("no metrics address in the output:\n%s", p.stdout)
	}
	eventually.True(t, "the GPU trial to start", func() bool { return s.exists("started") })

	// Each series and what its value must be while the trial runs. The GPU is sampled and the
	// metrics scraped concurrently, so this waits for all of them to hold at once.
	checks := []struct {
		series, want string
		ok           func(float64) bool
	}{
		{`runall_tasks{state="running"}`, "≥ 1", func(v float64) bool { return v >= 1 }},
		{`runall_gpu_memory_free_bytes{`, "> 0", func(v float64) bool { return v > 0 }},
		{`runall_gpu_memory_total_bytes{`, "32 GiB", func(v float64) bool { return v == 32<<30 }},
		{`runall_s3_bytes_transferred_total{direction="upload"}`, "≥ 8 (out/data.txt)", func(v float64) bool { return v >= 8 }},
	}
	var body string
	var wrong []string
	eventually.Until(30*time.Second, func() bool {
		body, wrong = scrapeMetrics(t, m[1]), nil
		for _, c := range checks {
			if v, found := metricSum(body, c.series); !found || !c.ok(v) {
				wrong = append(wrong, fmt.Sprintf("%s is %v (found: %v), want %s", c.series, v, found, c.want))
			}
		}
		return len(wrong) == 0
	})
	if len(wrong) > 0 {
		t.Errorf("while the GPU trial runs:\n%s\n--- last scrape:\n%s", strings.Join(wrong, "\n"), body)
	}
	s.createFile("release")
	p.wait().wantCode(t, 0)
}

func scrapeMetrics(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, b)
	}
	return string(b)
}

// metricSum sums the samples of the Prometheus text body whose line starts with series
// (a name, and optionally labels).
func metricSum(body, series string) (sum float64, found bool) {
	for _, l := range lines(body) {
		if !strings.HasPrefix(l, series) {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

// TestSyncStopsOnSignal: a sync in the middle of many uploads ends on SIGINT with 130,
// without waiting for the rest.
func TestSyncStopsOnSignal(t *testing.T) {
	t.Parallel()
	s := newS3E2E(t)
	const files = 5000
	dir := s.path("many")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := s.start("sync", dir, "s3://"+s.bucket+"/many")
	eventually.True(t, "the first uploads", func() bool { return len(listKeys(t, s.srv, s.bucket, "many/")) > 0 })
	p.signal(syscall.SIGINT)
	r := p.wait()
	r.wantCode(t, 130)
	if n := len(listKeys(t, s.srv, s.bucket, "many/")); n >= files {
		t.Errorf("all %d files were uploaded: the signal did not stop the sync", n)
	}
}

// TestIndexedJobWithoutShards (issue 42, point 3): an Indexed Job's Pod with
// JOB_COMPLETION_INDEX but neither RUNALL_SHARDS nor claims is warned that every Pod runs
// every trial, and told what to set; it runs on. With RUNALL_SHARDS it is not warned.
func TestIndexedJobWithoutShards(t *testing.T) {
	t.Parallel()
	const warning = "runall: warning: JOB_COMPLETION_INDEX=1 is set (an Indexed Job) without RUNALL_SHARDS or claims: every Pod runs every trial; set RUNALL_SHARDS"
	for _, tc := range []struct {
		env  []string
		warn bool
	}{
		{[]string{"JOB_COMPLETION_INDEX=1"}, true},
		{[]string{"JOB_COMPLETION_INDEX=1", "RUNALL_SHARDS=2"}, false},
	} {
		t.Run(strings.Join(tc.env, " "), func(t *testing.T) {
			t.Parallel()
			e := newE2E(t)
			e.env = append(e.env, "SHARED="+e.dir)
			r := e.withEnv(tc.env...).run("--log-dir", "logs", testdata("s3/shard.yml"))
			r.wantCode(t, 0)
			if got := strings.Contains(r.stderr, warning); got != tc.warn {
				t.Errorf("warned: %v, want %v\n%v", got, tc.warn, r)
			}
		})
	}
}
