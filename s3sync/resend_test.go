package s3sync

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/runall/runall/internal/miniotest"
)

// invalidPart is S3's answer to a CompleteMultipartUpload that names a part the server
// does not have: what a server that lost acknowledged parts in a restart says.
const invalidPart = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>InvalidPart</Code><Message>One or more of the specified parts could not be found.</Message><RequestId>proxy</RequestId><HostId>proxy</HostId></Error>`

// completeProxy stands in front of a MinIO server and refuses CompleteMultipartUploads
// with invalidPart: the first refuse of them, or every one when refuse is negative.
type completeProxy struct {
	refuse    int64
	onRefuse  func() // called as a Complete is refused; nil = none
	completes atomic.Int64
	url       string
}

func newCompleteProxy(t *testing.T, srv *miniotest.Server, refuse int64, onRefuse func()) *completeProxy {
	t.Helper()
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &completeProxy{refuse: refuse, onRefuse: onRefuse}
	rp := httputil.NewSingleHostReverseProxy(target) // keeps the Host the client signed
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
			if n := p.completes.Add(1); p.refuse < 0 || n <= p.refuse {
				io.Copy(io.Discard, r.Body)
				if p.onRefuse != nil {
					p.onRefuse()
				}
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, invalidPart)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	p.url = ts.URL
	return p
}

// proxiedClient is a Client for srv that goes through p, and the lines it logged.
func proxiedClient(t *testing.T, srv *miniotest.Server, p *completeProxy) (*Client, func() string) {
	t.Helper()
	env := map[string]string{}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["AWS_ENDPOINT_URL"], env["AWS_ENDPOINT_URL_S3"] = p.url, p.url
	var mu sync.Mutex
	var log strings.Builder
	logf := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		t.Log(msg)
		mu.Lock()
		defer mu.Unlock()
		log.WriteString(msg + "\n")
	}
	c, err := NewClient(context.Background(), ClientOptions{Getenv: envOf(env), Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
}

// TestMinIOResendsLostUpload: a CompleteMultipartUpload answered InvalidPart (parts lost in
// a server restart) makes the sync abort the upload and send the whole file again as a new
// one, once, and say so; a second refusal fails the file with the server's error. Either
// way no multipart upload is left behind.
func TestMinIOResendsLostUpload(t *testing.T) {
	srv := miniotest.Shared(t)
	big := randomBytes(11<<20 + 5)
	for _, tc := range []struct {
		name   string
		refuse int64
		ok     bool
	}{
		{name: "first Complete refused", refuse: 1, ok: true},
		{name: "every Complete refused", refuse: -1, ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := srv.NewBucket(t)
			p := newCompleteProxy(t, srv, tc.refuse, nil)
			c, logged := proxiedClient(t, srv, p)
			src := t.TempDir()
			writeTree(t, src, map[string]string{"model.pt": string(big), "cfg.yaml": "lr: 0.1"})
			var mu sync.Mutex
			var last Progress
			opts := Options{StateDir: t.TempDir(), PartSize: 5 << 20, Progress: func(pr Progress) {
				mu.Lock()
				defer mu.Unlock()
				if pr.Bytes > pr.BytesTotal {
					t.Errorf("progress %d of %d bytes: the resent bytes were counted twice", pr.Bytes, pr.BytesTotal)
				}
				last = pr
			}}
			got, err := c.Sync(context.Background(), src, "s3://"+bucket+"/ckpt/", opts)

			if n := p.completes.Load(); n != 2 {
				t.Errorf("%d CompleteMultipartUploads, want 2 (the upload and one resend)", n)
			}
			if !strings.Contains(logged(), "sending the whole file again as a new upload (attempt 2 of 2)") {
				t.Errorf("the resend was not logged; log:\n%s", logged())
			}
			if n := openUploads(t, srv, bucket, "ckpt/model.pt"); n != 0 {
				t.Errorf("%d multipart uploads left behind", n)
			}
			if !tc.ok {
				if err == nil || apiCode(err) != "InvalidPart" {
					t.Fatalf("err = %v, want the server's InvalidPart", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Files != 2 || got.Bytes != int64(len(big))+7 || last.Bytes != last.BytesTotal {
				t.Errorf("stats %+v, last progress %+v: want 2 files and every byte counted once", got, last)
			}
			checkWhole(t, srv, bucket, "ckpt/model.pt", big)
		})
	}
}

// checkWhole fails t unless the object at key holds want, as a 3-part upload carrying
// want's CRC32C.
func checkWhole(t *testing.T, srv *miniotest.Server, bucket, key string, want []byte) {
	t.Helper()
	out, err := srv.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("the object differs from the file (%d bytes, want %d; %v)", len(b), len(want), err)
	}
	if etag := trimETag(out.ETag); !strings.HasSuffix(etag, "-3") {
		t.Errorf("ETag %s: want a 3-part multipart object", etag)
	}
	if got, w := out.Metadata[metaCRC32C], crcHex(crc32.Checksum(want, castagnoli())); got != w {
		t.Errorf("metadata CRC32C = %q, want %q", got, w)
	}
}

// TestMinIOResendBookkeeping: the resend's upload is tracked open and closed like the
// first (which is aborted), progress hears of each byte of the file once, and a context
// that ended meanwhile sends nothing again.
func TestMinIOResendBookkeeping(t *testing.T) {
	srv := miniotest.Shared(t)
	big := randomBytes(11<<20 + 5)
	path := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sm, err := sumFile(context.Background(), f, int64(len(big)), minPartSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, cancelled := range []bool{false, true} {
		bucket := srv.NewBucket(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		onRefuse := func() {
			if cancelled {
				cancel()
			}
		}
		p := newCompleteProxy(t, srv, 1, onRefuse)
		c, _ := proxiedClient(t, srv, p)
		var opened, closed atomic.Int64
		var sent atomic.Int64
		tr := transfer{bucket: bucket, key: "big", size: int64(len(big)), sums: sm, partSize: minPartSize,
			progress: func(n int64) { sent.Add(n) },
			track: func(_ string, open bool) {
				if open {
					opened.Add(1)
				} else {
					closed.Add(1)
				}
			}}
		_, err := c.store.upload(ctx, tr, f)

		tries := int64(2)
		if cancelled {
			tries = 1
			if err == nil {
				t.Error("cancelled: the upload succeeded")
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if n := p.completes.Load(); n != tries {
			t.Errorf("cancelled %v: %d Completes, want %d", cancelled, n, tries)
		}
		if opened.Load() != tries || closed.Load() != tries {
			t.Errorf("cancelled %v: tracked %d opened, %d closed uploads; want %d and %d", cancelled, opened.Load(), closed.Load(), tries, tries)
		}
		if sent.Load() != int64(len(big)) {
			t.Errorf("cancelled %v: progress counted %d bytes, want %d", cancelled, sent.Load(), len(big))
		}
		if n := openUploads(t, srv, bucket, "big"); n != 0 {
			t.Errorf("cancelled %v: %d multipart uploads left behind", cancelled, n)
		}
		if !cancelled {
			checkWhole(t, srv, bucket, "big", big)
		}
	}
}
