// Package miniotest runs a real MinIO server for tests.
//
// A test package shares one server (MinIO is heavy) and makes a bucket per test:
//
//	func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		srv := miniotest.Shared(t)
//		bucket := srv.NewBucket(t)
//		...
//	}
//
// Tests that stop or restart the server take one of their own with Start. The binary is
// $MINIO_BIN, else minio on PATH, else $(go env GOPATH)/bin/minio. When none can be found or
// started, tests skip, except under CI=true, where they fail.
package miniotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/runall/runall/internal/citest"
	"github.com/runall/runall/internal/owned"
)

// Server is a running MinIO.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Dir       string // the data directory

	bin         string
	addr        string
	consoleAddr string
	logPath     string

	mu  sync.Mutex
	cmd *exec.Cmd
}

const (
	accessKey = "runall-test"
	secretKey = "runall-test-secret"
	readyWait = 60 * time.Second
)

// Start starts a MinIO server of the test's own, stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	srv, err := start(t.TempDir())
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

var shared struct {
	mu      sync.Mutex
	inMain  bool
	started bool
	srv     *Server
	err     error
	dir     *owned.Dir // made for the shared server; Main removes it
}

// Main runs the tests of a package that uses Shared and stops the shared server afterwards.
// Call it from TestMain: os.Exit(miniotest.Main(m)).
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	if shared.dir != nil {
		shared.dir.Close()
	}
	return code
}

// Shared returns the package's one server, starting it on first use. The package's
// TestMain must call Main, which stops it.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		t.Fatal("miniotest.Shared needs the package's TestMain to call miniotest.Main(m)")
	}
	if !shared.started {
		shared.started = true
		shared.dir, shared.err = owned.Temp("miniotest-")
		if shared.err == nil {
			shared.srv, shared.err = start(shared.dir.Path())
		}
	}
	if shared.err != nil {
		unavailable(t, shared.err)
	}
	return shared.srv
}

// unavailable skips the test, or fails it under CI, where MinIO must be there.
func unavailable(t testing.TB, err error) {
	t.Helper()
	citest.Unavailable(t, "MinIO unavailable (set MINIO_BIN, or go install github.com/minio/minio@latest): %v", err)
}

// findBinary looks for minio in $MINIO_BIN, PATH and $(go env GOPATH)/bin.
func findBinary() (string, error) {
	if p := os.Getenv("MINIO_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("MINIO_BIN: %w", err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "minio")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no minio binary in $MINIO_BIN, PATH or $(go env GOPATH)/bin")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func start(dir string) (*Server, error) {
	bin, err := findBinary()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	console, err := freeAddr()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	srv := &Server{
		Endpoint:    "http://" + addr,
		AccessKey:   accessKey,
		SecretKey:   secretKey,
		Dir:         data,
		bin:         bin,
		addr:        addr,
		consoleAddr: console,
		logPath:     filepath.Join(dir, "minio.log"),
	}
	if err := srv.run(); err != nil {
		return nil, err
	}
	return srv, nil
}

// run starts the process and waits until it serves requests.
func (s *Server) run() error {
	dir, err := owned.Open(filepath.Dir(s.logPath))
	if err != nil {
		return err
	}
	logf, err := dir.OpenAppend(filepath.Base(s.logPath))
	dir.Close()
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "server", s.Dir, "--address", s.addr, "--console-address", s.consoleAddr, "--quiet")
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that a signal to the test's group does not race Stop; killed
	// with the test binary (a test that times out or is killed leaves no server behind:
	// leaked servers held ports, disk and, through inherited descriptors, the callers' locks).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()

	deadline := time.Now().Add(readyWait)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return fmt.Errorf("minio exited before it was ready (%v):\n%s", err, s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	cmd.Process.Kill()
	return fmt.Errorf("minio not ready after %v:\n%s", readyWait, s.logTail())
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s). Stopping a stopped server does
// nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		// Signal 0 probes the process; Wait runs in run's goroutine and reaps it.
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	// Wait for the port to be free, so that Restart can bind it.
	for i := 0; i < 100; i++ {
		c, err := net.DialTimeout("tcp", s.addr, 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(50 * time.Millisecond)
	}
}

// Restart starts the server again after Stop, on the same port and data directory.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.run(); err != nil {
		t.Fatalf("restart minio: %v", err)
	}
}

// Env is the environment that points runall, the AWS SDKs and the aws CLI at the server.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_ENDPOINT_URL=" + s.Endpoint,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Client is an S3 client for the server, for tests that inspect buckets directly.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(s.Endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// MakeBucket creates a bucket.
func (s *Server) MakeBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("make bucket %s: %v", name, err)
	}
}

var bucketSeq atomic.Int64

var notBucketChars = regexp.MustCompile(`[^a-z0-9-]+`)

// NewBucket creates a bucket named after the test and returns its name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := strings.Trim(notBucketChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	suffix := fmt.Sprintf("-%d", bucketSeq.Add(1))
	if len(name) > 63-len(suffix) {
		name = name[:63-len(suffix)]
	}
	name = strings.Trim(name, "-") + suffix
	if len(name) < 3 || name[0] == '-' {
		name = "b" + name
	}
	s.MakeBucket(t, name)
	return name
}

// Put writes an object directly, as another tool would (no runall metadata).
func (s *Server) Put(t testing.TB, bucket, key string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Client().PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body),
	}); err != nil {
		t.Fatalf("put s3://%s/%s: %v", bucket, key, err)
	}
}
