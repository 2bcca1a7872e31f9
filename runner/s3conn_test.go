package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/runall/runall/internal/miniotest"
	"github.com/runall/runall/runner/plan"
)

// TestOneS3ClientPerRun: a run that downloads from S3, shares its trials through a claims
// prefix in S3 and keeps their checkpoints there makes one S3 client, which the
// transfers, the claims queue and the checkpoints all use.
func TestOneS3ClientPerRun(t *testing.T) {
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	srv.Put(t, bucket, "data/in.txt", []byte("in\n"))
	dir := t.TempDir()
	file := `
s3:
  download:
    - {from: "s3://${BUCKET}/data/", to: data/}
tasks:
  - name: sweep
    parallel-tasks:
      - name: x=<x>
        cmd: cat data/in.txt && mkdir -p ck/<x> && echo <x> > ck/<x>/state && sleep 0.5
        matrix: {x: [1, 2]}
        checkpoint: {dir: ck/<x>, every: 100ms}
`
	if err := os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load("tasks.yml", plan.LoadOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "BUCKET=" + bucket}, srv.Env()...)
	r, err := newRun(p, Options{Environ: env, Record: RecordOptions{LogDir: filepath.Join(dir, "logs")},
		Claims: ClaimsOptions{Prefix: "s3://" + bucket + "/claims/", Lease: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.execute(); err != nil {
		t.Fatalf("run: %v", err)
	}
	keys := listKeys(t, srv, bucket)
	for _, want := range []string{"claims/done/", "claims/checkpoints/"} {
		if !strings.Contains(keys, want) {
			t.Errorf("no key under %s: the run did not reach S3 as it should have\n%s", want, keys)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "data", "in.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("the download did not happen: %q, %v", b, err)
	}
	if made := r.env.s3.made; made != 1 {
		t.Errorf("the run made %d S3 clients, want 1 for the transfers, the claims and the checkpoints", made)
	}
}

func listKeys(t *testing.T, srv *miniotest.Server, bucket string) string {
	t.Helper()
	out, err := srv.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return strings.Join(keys, "\n")
}
