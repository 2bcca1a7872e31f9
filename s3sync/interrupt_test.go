package s3sync

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/runall/runall/internal/miniotest"
)

// Transfers interrupted half-way, against a real MinIO: a file rewritten while it uploads,
// a server killed mid-upload, a context cancelled mid-upload and mid-download.

// hookStore is a store whose transfers call hooks as they read their source (after the
// checksum pass, which reads the file directly) and write their destination.
type hookStore struct {
	store
	onRead  func(off int64)   // before each read of an upload's source, at off
	onWrite func(total int64) // after each write of a download, with the bytes written so far
}

func (h *hookStore) upload(ctx context.Context, t transfer, src io.ReaderAt) (string, error) {
	if h.onRead != nil {
		src = &hookReaderAt{r: src, fn: h.onRead}
	}
	return h.store.upload(ctx, t, src)
}

func (h *hookStore) download(ctx context.Context, t transfer, w io.WriterAt) (object, uint32, error) {
	if h.onWrite != nil {
		w = &hookWriterAt{w: w, fn: h.onWrite}
	}
	return h.store.download(ctx, t, w)
}

type hookReaderAt struct {
	r  io.ReaderAt
	fn func(int64)
}

func (h *hookReaderAt) ReadAt(p []byte, off int64) (int, error) {
	h.fn(off)
	return h.r.ReadAt(p, off)
}

type hookWriterAt struct {
	w     io.WriterAt
	fn    func(int64)
	total atomic.Int64
}

func (h *hookWriterAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := h.w.WriteAt(p, off)
	h.fn(h.total.Add(int64(n)))
	return n, err
}

// getObject returns an object's content, or nil when there is none.
func getObject(t *testing.T, srv *miniotest.Server, bucket, key string) []byte {
	t.Helper()
	out, err := srv.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMinIOFileRewrittenDuringUpload rewrites a checkpoint while its parts are being sent,
// in place or by renaming a new file over it: the upload is refused rather than completed
// torn, nothing is left behind, and the next sync uploads the new version whole.
func TestMinIOFileRewrittenDuringUpload(t *testing.T) {
	srv := miniotest.Shared(t)
	c := minioClient(t, srv)
	for _, tc := range []struct {
		name    string
		rewrite func(path string, data []byte) error
	}{
		{"in place", func(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }},
		{"renamed over", func(p string, b []byte) error {
			if err := os.WriteFile(p+".new", b, 0o644); err != nil {
				return err
			}
			return os.Rename(p+".new", p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := srv.NewBucket(t)
			v1, v2 := randomBytes(24<<20), randomBytes(24<<20)
			src := t.TempDir()
			writeTree(t, src, map[string]string{"ckpt.pt": string(v1)})
			path := filepath.Join(src, "ckpt.pt")
			var once sync.Once
			c.store = &hookStore{store: minioClient(t, srv).store, onRead: func(off int64) {
				if off >= 10<<20 {
					once.Do(func() {
						if err := tc.rewrite(path, v2); err != nil {
							t.Error(err)
						}
					})
				}
			}}
			opts := Options{StateDir: t.TempDir(), PartSize: minPartSize}
			dst := "s3://" + bucket + "/run/"
			_, err := c.Sync(context.Background(), src, dst, opts)
			if !errors.Is(err, errChanged) {
				t.Fatalf("sync while the file is rewritten: err = %v, want %v", err, errChanged)
			}
			if b := getObject(t, srv, bucket, "run/ckpt.pt"); b != nil {
				t.Errorf("an object of %d bytes was written from a file rewritten during its upload", len(b))
			}
			if n := openUploads(t, srv, bucket, "run/ckpt.pt"); n != 0 {
				t.Errorf("%d multipart uploads left behind", n)
			}

			c.store = minioClient(t, srv).store
			if got := mustSync(t, c, src, dst, opts); got.Files != 1 {
				t.Errorf("next sync: %+v, want the file uploaded", got)
			}
			if b := getObject(t, srv, bucket, "run/ckpt.pt"); !bytes.Equal(b, v2) {
				t.Errorf("object (%d bytes) is not the new version whole (equal to the old: %v)", len(b), bytes.Equal(b, v1))
			}
		})
	}
}

// TestMinIOKilledMidUploadLeavesNoUpload kills the server while a multipart upload is
// sending its parts; the sync is then cancelled (as SIGTERM would), its abort cannot
// reach the server, and the upload stays there. The next sync aborts it and uploads the
// file whole.
func TestMinIOKilledMidUploadLeavesNoUpload(t *testing.T) {
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	data := randomBytes(40 << 20)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"model.bin": string(data)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	c.store = &hookStore{store: c.store, onRead: func(off int64) {
		if off >= 10<<20 {
			once.Do(func() {
				srv.Stop()
				cancel()
			})
		}
	}}
	opts := Options{StateDir: t.TempDir(), PartSize: minPartSize}
	dst := "s3://" + bucket + "/run/"
	if _, err := c.Sync(ctx, src, dst, opts); err == nil {
		t.Fatal("sync succeeded with the server killed under it")
	}
	srv.Restart(t)
	if n := openUploads(t, srv, bucket, "run/model.bin"); n != 1 {
		t.Fatalf("%d multipart uploads after the kill, want 1: the test did not interrupt an upload", n)
	}

	c = minioClient(t, srv)
	if got := mustSync(t, c, src, dst, opts); got.Files != 1 {
		t.Errorf("next sync: %+v, want the file uploaded", got)
	}
	if n := openUploads(t, srv, bucket, "run/model.bin"); n != 0 {
		t.Errorf("%d multipart uploads left after the next sync, want none", n)
	}
	if b := getObject(t, srv, bucket, "run/model.bin"); !bytes.Equal(b, data) {
		t.Errorf("object (%d bytes) is not the file", len(b))
	}
}

// TestMinIOCancelledUploadIsAborted cancels a sync (SIGTERM) while a multipart upload is
// under way: the upload is aborted at once, not left for the next sync.
func TestMinIOCancelledUploadIsAborted(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"model.bin": string(randomBytes(40 << 20))})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.store = &hookStore{store: c.store, onRead: func(off int64) {
		if off >= 10<<20 {
			cancel()
		}
	}}
	_, err := c.Sync(ctx, src, "s3://"+bucket+"/run/", Options{StateDir: t.TempDir(), PartSize: minPartSize})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := openUploads(t, srv, bucket, "run/model.bin"); n != 0 {
		t.Errorf("%d multipart uploads left behind by a cancelled sync", n)
	}
	if b := getObject(t, srv, bucket, "run/model.bin"); b != nil {
		t.Errorf("a cancelled upload wrote an object of %d bytes", len(b))
	}
}

// TestMinIOInterruptedDownloadLeavesNoFile cancels downloads half-way: nothing appears
// under the final name, an older version there stays as it was, and no temp file is left.
func TestMinIOInterruptedDownloadLeavesNoFile(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	data := randomBytes(40 << 20)
	srv.Put(t, bucket, "run/model.bin", data)
	for _, old := range []string{"", "an older version"} {
		t.Run("old="+old, func(t *testing.T) {
			c := minioClient(t, srv)
			dst := t.TempDir()
			if old != "" {
				writeTree(t, dst, map[string]string{"model.bin": old})
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c.store = &hookStore{store: c.store, onWrite: func(total int64) {
				if total >= int64(len(data))/2 {
					cancel()
				}
			}}
			_, err := c.Sync(ctx, "s3://"+bucket+"/run/", dst, Options{StateDir: t.TempDir(), PartSize: minPartSize})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			want := map[string]string{}
			if old != "" {
				want["model.bin"] = old
			}
			got := readTree(t, dst)
			if len(got) != len(want) || got["model.bin"] != want["model.bin"] {
				names := []string{}
				for k, v := range got {
					names = append(names, k+" ("+FormatBytes(int64(len(v)))+")")
				}
				t.Errorf("after an interrupted download the directory holds %v, want %d file(s) as before", names, len(want))
			}
		})
	}
}

// TestMinIODownloadIsVerified stores objects whose metadata does not match their content,
// as a corrupted store would serve them: the download is refused and nothing appears under
// the final name. An object with no metadata is checked against its ETag (its MD5).
func TestMinIODownloadIsVerified(t *testing.T) {
	srv := miniotest.Shared(t)
	bucket := srv.NewBucket(t)
	c := minioClient(t, srv)
	data := randomBytes(12 << 20)
	put := func(key string, meta map[string]string) {
		_, err := srv.Client().PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data), Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("crc/model.bin", map[string]string{metaCRC32C: crcHex(crc32.Checksum([]byte("other"), castagnoli()))})
	put("sha/model.bin", map[string]string{metaSHA256: sha256Hex([]byte("other"))})
	put("plain/model.bin", nil)
	for _, prefix := range []string{"crc", "sha"} {
		dst := t.TempDir()
		_, err := c.Sync(context.Background(), "s3://"+bucket+"/"+prefix+"/", dst, Options{StateDir: t.TempDir(), PartSize: minPartSize})
		if !errors.Is(err, errCorrupt) {
			t.Errorf("%s: err = %v, want %v", prefix, err, errCorrupt)
		}
		if got := readTree(t, dst); len(got) != 0 {
			t.Errorf("%s: a download that failed verification left %d files", prefix, len(got))
		}
	}
	dst := t.TempDir()
	mustSync(t, c, "s3://"+bucket+"/plain/", dst, Options{StateDir: t.TempDir()})
	if b, _ := os.ReadFile(filepath.Join(dst, "model.bin")); !bytes.Equal(b, data) {
		t.Error("object with no metadata downloaded wrong")
	}
}
