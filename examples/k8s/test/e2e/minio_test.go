package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// minio is a MinIO server on loopback, the Pods' S3 (they share the host's network).
type minio struct {
	endpoint string
	client   *s3.Client
}

const (
	minioUser   = "runall-k8s-test"
	minioSecret = "runall-k8s-test-secret"
	bucket      = "training" // S3_BUCKET in examples/k8s/common
)

// startMinIO starts MinIO ($MINIO_BIN, minio on PATH, or $(go env GOPATH)/bin/minio) with the
// example's bucket, stopped when the test ends. Missing, it skips the test (fails under CI=true).
func startMinIO(t *testing.T) *minio {
	t.Helper()
	bin := minioBinary()
	if bin == "" {
		unavailable(t, "minio: not found; go install github.com/minio/minio@latest (or set MINIO_BIN)")
	}
	port, console := freePort(t), freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", t.TempDir(), "--address", addr, "--console-address", fmt.Sprintf("127.0.0.1:%d", console), "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+minioUser, "MINIO_ROOT_PASSWORD="+minioSecret, "MINIO_BROWSER=off")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		unavailable(t, "minio: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	m := &minio{endpoint: "http://" + addr}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(m.endpoint + "/minio/health/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("minio at %s: not ready after 60s", addr)
		}
	}
	m.client = s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(m.endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(minioUser, minioSecret, ""),
	})
	if _, err := m.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("minio: create bucket %s: %v", bucket, err)
	}
	return m
}

func minioBinary() string {
	if b := os.Getenv("MINIO_BIN"); b != "" {
		return b
	}
	if b, err := exec.LookPath("minio"); err == nil {
		return b
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		b := filepath.Join(strings.TrimSpace(string(out)), "bin", "minio")
		if _, err := os.Stat(b); err == nil {
			return b
		}
	}
	return ""
}

// keys lists the bucket's keys under prefix.
func (m *minio) keys(t *testing.T, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(m.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list s3://%s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, *o.Key)
		}
	}
	return keys
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// unavailable skips t, or fails it under CI=true.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI: "+format, args...)
	}
	t.Skipf(format, args...)
}

// get is the object's body.
func (m *minio) get(t *testing.T, key string) string {
	t.Helper()
	out, err := m.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get s3://%s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
