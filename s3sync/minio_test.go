package s3sync

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/runall/runall/internal/miniotest"
)

func TestMain(m *testing.M) { os.Exit(miniotest.Main(m)) }

// minioClient is a Client for srv, configured the way a training container would be: from
// the environment.
func minioClient(t testing.TB, srv *miniotest.Server) *Client {
	t.Helper()
	env := map[string]string{}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	c, err := NewClient(context.Background(), ClientOptions{Getenv: envOf(env), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func remoteTree(t testing.TB, srv *miniotest.Server, bucket string) map[string]string {
	t.Helper()
	api := srv.Client()
	m := map[string]string{}
	p := s3.NewListObjectsV2Paginator(api, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out, err := api.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(out.Body)
			out.Body.Close()
			m[*o.Key] = buf.String()
		}
	}
	return m
}

func TestMinIORoundTrip(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	opts := Options{StateDir: t.TempDir()}

	files := map[string]string{"empty": "", "deep/er/x.json": `{"a":1}`}
	for i := range 40 {
		files[fmt.Sprintf("shard-%02d/part.bin", i)] = string(randomBytes(1000 + i))
	}
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, files)

	got := mustSync(t, c, src, "s3://"+bucket+"/ds", opts)
	if got.Files != int64(len(files)) {
		t.Errorf("upload stats = %+v, want %d files", got, len(files))
	}
	want := map[string]string{}
	for k, v := range files {
		want["ds/"+k] = v
	}
	if remote := remoteTree(t, srv, bucket); !reflect.DeepEqual(remote, want) {
		t.Errorf("bucket holds %d objects, want %d, or contents differ", len(remote), len(want))
	}
	got = mustSync(t, c, "s3://"+bucket+"/ds/", dst, opts)
	if got.Files != int64(len(files)) {
		t.Errorf("download stats = %+v", got)
	}
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, files) {
		t.Errorf("downloaded tree differs from the source")
	}

	for _, dir := range [][2]string{{src, "s3://" + bucket + "/ds"}, {"s3://" + bucket + "/ds/", dst}} {
		if got := mustSync(t, c, dir[0], dir[1], opts); got.Files != 0 || got.SkippedFiles != int64(len(files)) {
			t.Errorf("re-sync %s → %s: %+v, want all skipped", dir[0], dir[1], got)
		}
	}
}

func TestMinIOSameSizeChange(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	opts := Options{StateDir: t.TempDir()}
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"cfg.yaml": "lr: 0.1"})
	mustSync(t, c, src, "s3://"+bucket+"/", opts)
	mustSync(t, c, "s3://"+bucket+"/", dst, opts)

	// Up: same size, new content, new mtime.
	writeTree(t, src, map[string]string{"cfg.yaml": "lr: 0.2"})
	later := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(src, "cfg.yaml"), later, later)
	if got := mustSync(t, c, src, "s3://"+bucket+"/", opts); got.Files != 1 {
		t.Errorf("upload after same-size change: %+v, want 1 file", got)
	}
	// Down: the object changed under the same size.
	if got := mustSync(t, c, "s3://"+bucket+"/", dst, opts); got.Files != 1 {
		t.Errorf("download after same-size change: %+v, want 1 file", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "cfg.yaml")); string(b) != "lr: 0.2" {
		t.Errorf("downloaded %q, want the new content", b)
	}
	// Another tool rewrites it, same size again.
	srv.Put(t, bucket, "cfg.yaml", []byte("lr: 0.3"))
	if got := mustSync(t, c, "s3://"+bucket+"/", dst, opts); got.Files != 1 {
		t.Errorf("download after foreign same-size change: %+v, want 1 file", got)
	}
}

func TestMinIOMultipart(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	opts := Options{StateDir: t.TempDir(), PartSize: 5 << 20}
	src, dst := t.TempDir(), t.TempDir()
	big := randomBytes(12<<20 + 123)
	writeTree(t, src, map[string]string{"model.pt": string(big)})

	if got := mustSync(t, c, src, "s3://"+bucket+"/ckpt/", opts); got.Files != 1 || got.Bytes != int64(len(big)) {
		t.Errorf("upload stats = %+v", got)
	}
	head, err := srv.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("ckpt/model.pt")})
	if err != nil {
		t.Fatal(err)
	}
	if etag := aws.ToString(head.ETag); !strings.HasSuffix(strings.Trim(etag, `"`), "-3") {
		t.Errorf("ETag %s: want a 3-part multipart object", etag)
	}
	if got, want := head.Metadata[metaCRC32C], crcHex(crc32.Checksum(big, castagnoli())); got != want {
		t.Errorf("metadata CRC32C = %q, want %q", got, want)
	}
	if got := head.Metadata[metaSHA256]; got != "" {
		t.Errorf("metadata SHA-256 = %q, want none for a file sent from disk", got)
	}
	if got := mustSync(t, c, src, "s3://"+bucket+"/ckpt/", opts); got.Files != 0 {
		t.Errorf("re-upload: %+v, want skipped", got)
	}
	// Another machine (no record) compares by the CRC32C in the metadata.
	if got := mustSync(t, c, src, "s3://"+bucket+"/ckpt/", Options{StateDir: t.TempDir(), PartSize: 5 << 20}); got.Files != 0 {
		t.Errorf("re-upload with no record: %+v, want skipped", got)
	}

	if got := mustSync(t, c, "s3://"+bucket+"/ckpt/", dst, opts); got.Files != 1 {
		t.Errorf("download stats = %+v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "model.pt")); !bytes.Equal(b, big) {
		t.Fatal("downloaded multipart object differs")
	}
	// A fresh record (another machine) must compare by the metadata MD5, not download.
	if got := mustSync(t, c, "s3://"+bucket+"/ckpt/", dst, Options{StateDir: t.TempDir(), PartSize: 5 << 20}); got.Files != 0 {
		t.Errorf("download with no record over an identical file: %+v, want skipped", got)
	}

	// Same-size change in the middle of the file, seen by a machine with no record: the
	// CRC32Cs differ.
	copy(big[7<<20:], "changed")
	writeTree(t, src, map[string]string{"model.pt": string(big)})
	if got := mustSync(t, c, src, "s3://"+bucket+"/ckpt/", Options{StateDir: t.TempDir(), PartSize: 5 << 20}); got.Files != 1 {
		t.Errorf("upload after same-size change: %+v", got)
	}
	if got := mustSync(t, c, "s3://"+bucket+"/ckpt/", dst, opts); got.Files != 1 {
		t.Errorf("download after same-size change: %+v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "model.pt")); !bytes.Equal(b, big) {
		t.Fatal("downloaded multipart object differs after change")
	}
}

func TestMinIOExtract(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	entries := []tarEntry{{name: "train/a.txt", body: "a"}, {name: "val/b.txt", body: "b"}}
	srv.Put(t, bucket, "ds.zip", zipBytes(t, entries))
	srv.Put(t, bucket, "ds.tar.gz", tarGz(t, entries))
	srv.Put(t, bucket, "evil.tar.gz", tarGz(t, []tarEntry{{name: "../evil", body: "x"}}))
	want := map[string]string{"train/a.txt": "a", "val/b.txt": "b"}
	for _, key := range []string{"ds.zip", "ds.tar.gz"} {
		t.Run(key, func(t *testing.T) {
			opts := Options{StateDir: t.TempDir(), Extract: true}
			dst := t.TempDir()
			mustSync(t, c, "s3://"+bucket+"/"+key, dst, opts)
			if tree := readTree(t, dst); !reflect.DeepEqual(tree, want) {
				t.Errorf("tree = %v, want %v", tree, want)
			}
			if got := mustSync(t, c, "s3://"+bucket+"/"+key, dst, opts); got.Files != 0 || got.SkippedFiles != 1 {
				t.Errorf("re-sync: %+v, want the archive skipped", got)
			}
		})
	}
	parent := t.TempDir()
	_, err := c.Sync(context.Background(), "s3://"+bucket+"/evil.tar.gz", filepath.Join(parent, "dst"), Options{StateDir: t.TempDir(), Extract: true})
	if err == nil || !strings.Contains(err.Error(), `"../evil"`) {
		t.Errorf("err = %v, want a refusal naming ../evil", err)
	}
	if tree := readTree(t, parent); len(tree) != 0 {
		t.Errorf("files left behind: %v", tree)
	}
}

func TestMinIODeleteAndExclude(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"keep.txt": "k", "x.tmp": "t", "__pycache__/m.pyc": "p"})
	srv.Put(t, bucket, "out/old.txt", []byte("old"))
	opts := Options{StateDir: t.TempDir(), Exclude: []string{"*.tmp", "__pycache__"}}
	mustSync(t, c, src, "s3://"+bucket+"/out/", opts)
	if remote := remoteTree(t, srv, bucket); !reflect.DeepEqual(remote, map[string]string{"out/keep.txt": "k", "out/old.txt": "old"}) {
		t.Errorf("without delete: %v", remote)
	}
	opts.Delete = true
	if got := mustSync(t, c, src, "s3://"+bucket+"/out/", opts); got.Deleted != 1 {
		t.Errorf("stats = %+v, want 1 deleted", got)
	}
	if remote := remoteTree(t, srv, bucket); !reflect.DeepEqual(remote, map[string]string{"out/keep.txt": "k"}) {
		t.Errorf("with delete: %v", remote)
	}
}

func TestMinIOWrongCredentialsDoNotShowTheSecret(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	const secret = "wrong-secret-0123456789abcdef"
	for _, env := range []map[string]string{
		{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": secret, "AWS_ENDPOINT_URL": srv.Endpoint},
		{"aws_access_key_id": srv.AccessKey, "aws_secret_access_key": secret, "endpoint_url": srv.Endpoint},
	} {
		c, err := NewClient(context.Background(), ClientOptions{Getenv: envOf(env)})
		if err != nil {
			t.Fatal(err)
		}
		src := t.TempDir()
		writeTree(t, src, map[string]string{"f": "x"})
		_, err = c.Sync(context.Background(), src, "s3://"+bucket+"/", Options{StateDir: t.TempDir()})
		if err == nil {
			t.Fatal("sync with a wrong secret: no error")
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the secret: %v", err)
		}
		t.Logf("error: %v", err)
		if !strings.Contains(err.Error(), "check the credentials") {
			t.Errorf("error gives no hint: %v", err)
		}
	}
}

func TestMinIOPutObjectAndExists(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	ctx := context.Background()
	url := "s3://" + bucket + "/runs/1/_SUCCESS"
	if ok, err := c.Exists(ctx, url); err != nil || ok {
		t.Fatalf("Exists before put = %v, %v", ok, err)
	}
	if err := c.PutObject(ctx, url, []byte("done")); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Exists(ctx, url); err != nil || !ok {
		t.Fatalf("Exists after put = %v, %v", ok, err)
	}
	if _, err := c.Exists(ctx, "s3://no-such-bucket-runall/x"); err != nil {
		t.Logf("Exists in a missing bucket: %v", err)
	}
}

// TestMinIORestartMidTransfer stops the server during a sync and starts it again a few
// seconds later: the sync must finish (retries), leaving no temp or torn files.
func TestMinIORestartMidTransfer(t *testing.T) {
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)

	files := map[string]string{}
	for i := range 150 {
		files[fmt.Sprintf("small/%03d.bin", i)] = string(randomBytes(64 << 10))
	}
	for i := range 3 {
		files[fmt.Sprintf("big/%d.bin", i)] = string(randomBytes(24 << 20))
	}
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, files)

	// restartAfter returns an OnAction that restarts the server after n files, once.
	restartAfter := func(n int) (func(Action), *sync.WaitGroup) {
		var once sync.Once
		var wg sync.WaitGroup
		count := 0
		return func(Action) {
			count++
			if count < n {
				return
			}
			at := count
			once.Do(func() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					t0 := time.Now()
					srv.Stop()
					t.Logf("stopped the server after %d files (in %v)", at, time.Since(t0))
					time.Sleep(2 * time.Second)
					srv.Restart(t)
					t.Logf("restarted it, %v after stopping", time.Since(t0))
				}()
			})
		}, &wg
	}

	onAction, wg := restartAfter(5)
	opts := Options{StateDir: t.TempDir(), PartSize: 5 << 20, Concurrency: 8, OnAction: onAction}
	got, err := c.Sync(context.Background(), src, "s3://"+bucket+"/d/", opts)
	wg.Wait()
	if err != nil {
		t.Fatalf("upload across a restart: %v", err)
	}
	if got.Files != int64(len(files)) {
		t.Errorf("upload stats = %+v", got)
	}

	onAction, wg = restartAfter(5)
	opts.OnAction = onAction
	_, err = c.Sync(context.Background(), "s3://"+bucket+"/d/", dst, opts)
	wg.Wait()
	if err != nil {
		t.Fatalf("download across a restart: %v", err)
	}
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, files) {
		var extra []string
		for k := range tree {
			if _, ok := files[k]; !ok {
				extra = append(extra, k)
			}
		}
		t.Errorf("downloaded tree differs (%d files, want %d; extra: %v)", len(tree), len(files), extra)
	}
	// Every object whole, and a re-sync finds nothing to do.
	if got := mustSync(t, c, src, "s3://"+bucket+"/d/", Options{StateDir: t.TempDir(), PartSize: 5 << 20}); got.Files != 0 {
		t.Errorf("re-sync with a fresh record transferred %d files: some objects are not whole", got.Files)
	}
}

// TestMinIOVerifiesChecksums shows that the server checks the CRC32C runall sends with each
// request (the payload itself is unsigned): a wrong one makes it refuse the bytes, and a
// multipart upload refused that way is aborted, not left behind.
func TestMinIOVerifiesChecksums(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	ctx := context.Background()
	body := []byte("payload")
	wrong := sumBytes([]byte("other"))
	if _, err := c.store.upload(ctx, transfer{bucket: bucket, key: "k", size: int64(len(body)), sums: wrong}, bytes.NewReader(body)); err == nil {
		t.Fatal("a PUT with a wrong CRC32C succeeded: the server does not check it")
	}
	if _, err := c.store.upload(ctx, transfer{bucket: bucket, key: "k", size: int64(len(body)), sums: sumBytes(body)}, bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}

	big := randomBytes(11 << 20)
	sm, err := sumFile(context.Background(), bytes.NewReader(big), int64(len(big)), minPartSize)
	if err != nil {
		t.Fatal(err)
	}
	sm.parts[1] ^= 1
	var opened, closed int
	tr := transfer{bucket: bucket, key: "big", size: int64(len(big)), sums: sm, partSize: minPartSize,
		track: func(_ string, open bool) {
			if open {
				opened++
			} else {
				closed++
			}
		}}
	if _, err := c.store.upload(ctx, tr, bytes.NewReader(big)); err == nil {
		t.Fatal("a part with a wrong CRC32C was accepted")
	}
	if opened != 1 || closed != 1 {
		t.Errorf("tracked %d opened, %d closed uploads; want 1 and 1 (aborted)", opened, closed)
	}
	if n := openUploads(t, srv, bucket, "big"); n != 0 {
		t.Errorf("%d multipart uploads left behind", n)
	}
}

// openUploads counts the multipart uploads of key in progress. MinIO lists the uploads of
// one object at a time: the prefix must be the key.
func openUploads(t testing.TB, srv *miniotest.Server, bucket, key string) int {
	t.Helper()
	out, err := srv.Client().ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{
		Bucket: aws.String(bucket), Prefix: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Uploads)
}

// TestMinIOVerifiesChecksumsFromFile: parts sent from a file go out with sendfile(2) (see
// fromFile), and the server still checks each against its CRC32C.
func TestMinIOVerifiesChecksumsFromFile(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	ctx := context.Background()
	big := randomBytes(11<<20 + 5)
	p := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sm, err := sumFile(ctx, f, int64(len(big)), minPartSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, partSize := range []int64{0, minPartSize} { // one PUT, then multipart
		bad := sums{crc: sm.crc ^ 1, parts: slices.Clone(sm.parts)}
		bad.parts[len(bad.parts)-1] ^= 1
		tr := transfer{bucket: bucket, key: "big", size: int64(len(big)), sums: bad, partSize: partSize}
		if _, err := c.store.upload(ctx, tr, f); err == nil {
			t.Fatalf("part size %d: a wrong CRC32C was accepted", partSize)
		}
		var sent atomic.Int64
		tr.sums, tr.progress = sm, func(n int64) { sent.Add(n) }
		if _, err := c.store.upload(ctx, tr, f); err != nil {
			t.Fatalf("part size %d: %v", partSize, err)
		}
		if sent.Load() != int64(len(big)) {
			t.Errorf("part size %d: progress counted %d bytes, want %d", partSize, sent.Load(), len(big))
		}
		got, err := srv.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("big")})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(got.Body)
		got.Body.Close()
		if err != nil || !bytes.Equal(b, big) {
			t.Fatalf("part size %d: object differs from the file (%v)", partSize, err)
		}
	}
}
