package s3sync

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// store is what the sync engine needs from an object store. s3Store is the real one; the
// tests add an in-memory one.
type store interface {
	// list calls fn for every object under prefix, in key order.
	list(ctx context.Context, bucket, prefix string, fn func(object) error) error
	// head returns one object with its metadata, or an error wrapping errNotFound.
	head(ctx context.Context, bucket, key string) (object, error)
	// upload writes body (t.size bytes) as t.key, recording t.sha in the object's metadata,
	// and returns the new ETag. The object appears whole or not at all.
	upload(ctx context.Context, t transfer, body io.ReadSeeker) (etag string, err error)
	// download writes the object into w and returns what it read (ETag and metadata of
	// the version it got).
	download(ctx context.Context, t transfer, w io.WriterAt) (object, error)
	// remove deletes keys; absent keys are not an error.
	remove(ctx context.Context, bucket string, keys []string) error
}

// object is what a listing or a HEAD tells about an object.
type object struct {
	key  string
	size int64
	etag string // without quotes
	sha  string // hex SHA-256 of the content, from metadata (HEAD and GET only)
}

// transfer is one object to move.
type transfer struct {
	bucket, key string
	size        int64
	sha         string        // upload: the content's hex SHA-256, stored as metadata
	partSHAs    []string      // upload, multipart: each part's hex SHA-256, for signing
	partSize    int64         // multipart part size and threshold; 0 = default
	progress    func(n int64) // bytes moved since the last call; nil = none
}

var errNotFound = errors.New("not found")

// metaSHA256 is the user-metadata key (x-amz-meta-runall-sha256) holding an object's
// content SHA-256: a multipart object's ETag is no content hash, and `sha256sum` can check
// this one.
const metaSHA256 = "runall-sha256"

// defaultPartSize is the multipart part size, also the size from which uploads go
// multipart and downloads fetch ranges in parallel.
const defaultPartSize = 8 << 20

// minPartSize is S3's smallest part.
const minPartSize = 5 << 20

type s3Store struct {
	api *s3.Client
	tm  *transfermanager.Client
}

func newS3Store(api *s3.Client) *s3Store {
	tm := transfermanager.New(api, func(o *transfermanager.Options) {
		// The transfer manager overrides the client's checksum setting with its own,
		// which defaults to CRC32 trailers: S3-compatible servers that reject them
		// would fail every upload.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.DisableChecksumValidation = true
		// Ranges, not part numbers: every S3-compatible server supports Range, not all
		// support GET ?partNumber.
		o.GetObjectType = tmtypes.GetObjectRanges
		o.PartBodyMaxRetries = 5
	})
	return &s3Store{api: api, tm: tm}
}

func trimETag(s *string) string { return strings.Trim(aws.ToString(s), `"`) }

func (s *s3Store) list(ctx context.Context, bucket, prefix string, fn func(object) error) error {
	p := s3.NewListObjectsV2Paginator(s.api, &s3.ListObjectsV2Input{
		Bucket: aws.String(bucket),
		Prefix: aws.String(prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			if err := fn(object{key: aws.ToString(o.Key), size: aws.ToInt64(o.Size), etag: trimETag(o.ETag)}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *s3Store) head(ctx context.Context, bucket, key string) (object, error) {
	out, err := s.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		var nf *s3types.NotFound
		if errors.As(err, &nf) {
			return object{}, fmt.Errorf("%w: %w", errNotFound, err)
		}
		return object{}, err
	}
	return object{
		key:  key,
		size: aws.ToInt64(out.ContentLength),
		etag: trimETag(out.ETag),
		sha:  shaFromMetadata(out.Metadata),
	}, nil
}

// shaFromMetadata returns the content SHA-256 that runall stored, or "".
func shaFromMetadata(m map[string]string) string {
	if v := strings.ToLower(m[metaSHA256]); len(v) == 2*sha256.Size && isHex(v) {
		return v
	}
	return ""
}

// progressListener turns the transfer manager's running totals, which can arrive out of
// order from parallel parts, into deltas.
type progressListener struct {
	seen atomic.Int64
	fn   func(int64)
}

func (l *progressListener) OnObjectBytesTransferred(_ context.Context, ev *transfermanager.ObjectBytesTransferredEvent) {
	for {
		old := l.seen.Load()
		if ev.BytesTransferred <= old {
			return
		}
		if l.seen.CompareAndSwap(old, ev.BytesTransferred) {
			l.fn(ev.BytesTransferred - old)
			return
		}
	}
}

func (s *s3Store) tmOptions(t transfer) func(*transfermanager.Options) {
	return func(o *transfermanager.Options) {
		o.PartSizeBytes = partSizeOf(t)
		o.MultipartUploadThreshold = partSizeOf(t)
		if t.progress != nil {
			o.ObjectProgressListeners.Register(&progressListener{fn: t.progress})
		}
	}
}

// partSizeOf is t's part size, which is also the multipart threshold.
func partSizeOf(t transfer) int64 {
	if t.partSize > 0 {
		return t.partSize
	}
	return defaultPartSize
}

func (s *s3Store) upload(ctx context.Context, t transfer, body io.ReadSeeker) (string, error) {
	var contentType *string
	if ct := mime.TypeByExtension(path.Ext(t.key)); ct != "" {
		contentType = aws.String(ct)
	}
	meta := map[string]string{metaSHA256: t.sha}
	ctx = context.WithValue(ctx, payloadHashesKey{}, &payloadHashes{whole: t.sha, parts: t.partSHAs})
	if t.size < partSizeOf(t) {
		// One PUT: the transfer manager would only copy the body and add goroutines.
		out, err := s.api.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(t.bucket), Key: aws.String(t.key), Body: body,
			ContentLength: aws.Int64(t.size), Metadata: meta, ContentType: contentType,
		})
		if err != nil {
			return "", err
		}
		if t.progress != nil {
			t.progress(t.size)
		}
		return trimETag(out.ETag), nil
	}
	out, err := s.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket: aws.String(t.bucket), Key: aws.String(t.key), Body: body,
		ContentLength: aws.Int64(t.size), Metadata: meta, ContentType: contentType,
	}, s.tmOptions(t))
	if err != nil {
		return "", err
	}
	return trimETag(out.ETag), nil
}

// smallGetAttempts bounds the retries of a small GET whose body breaks off: the SDK retries
// failed requests, not bodies that stop half-way.
const smallGetAttempts = 5

func (s *s3Store) download(ctx context.Context, t transfer, w io.WriterAt) (object, error) {
	if t.size >= partSizeOf(t) {
		out, err := s.tm.DownloadObject(ctx, &transfermanager.DownloadObjectInput{
			Bucket:   aws.String(t.bucket),
			Key:      aws.String(t.key),
			WriterAt: w,
		}, s.tmOptions(t))
		if err != nil {
			return object{}, err
		}
		return object{
			key:  t.key,
			size: aws.ToInt64(out.ContentLength),
			etag: trimETag(out.ETag),
			sha:  shaFromMetadata(out.Metadata),
		}, nil
	}
	// One GET for a small object.
	var lastErr error
	for range smallGetAttempts {
		out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(t.bucket), Key: aws.String(t.key)})
		if err != nil {
			return object{}, err
		}
		n, err := io.Copy(io.NewOffsetWriter(w, 0), out.Body)
		out.Body.Close()
		if err == nil {
			if t.progress != nil {
				t.progress(n)
			}
			return object{key: t.key, size: n, etag: trimETag(out.ETag), sha: shaFromMetadata(out.Metadata)}, nil
		}
		if ctx.Err() != nil {
			return object{}, ctx.Err()
		}
		lastErr = err
	}
	return object{}, fmt.Errorf("read s3://%s/%s: %w", t.bucket, t.key, lastErr)
}

func (s *s3Store) remove(ctx context.Context, bucket string, keys []string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000) // DeleteObjects' limit
		ids := make([]s3types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			ids[i] = s3types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := s.api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return err
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("delete s3://%s/%s: %s: %s (and %d more)", bucket,
				aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors)-1)
		}
		keys = keys[n:]
	}
	return nil
}

// hintError adds what to do about an error the user can fix.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + " (" + e.hint + ")" }
func (e *hintError) Unwrap() error { return e.err }

// withHint recognises the common configuration mistakes.
func withHint(err error) error {
	var hint string
	var apiErr smithy.APIError
	var respErr interface{ HTTPStatusCode() int }
	switch {
	case noCredentials(err):
		// Before the status checks: the SDK's last try, the EC2 metadata service, may
		// answer 403, which is no statement about the bucket.
		hint = "no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, " +
			"or run where a role provides them; for a public bucket, signature_version=unsigned"
	case errors.As(err, &apiErr):
		switch apiErr.ErrorCode() {
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "InvalidClientTokenId":
			hint = "check the credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or the profile"
		case "NoSuchBucket":
			hint = "the bucket does not exist at this endpoint: check the URL and --endpoint"
		case "AccessDenied", "Forbidden":
			hint = "the credentials lack permission for this bucket or prefix"
		}
	case errors.As(err, &respErr) && respErr.HTTPStatusCode() == http.StatusForbidden:
		hint = "the credentials lack permission for this bucket or prefix"
	case strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "no such host"):
		hint = "cannot reach the endpoint: check --endpoint or AWS_ENDPOINT_URL"
	}
	if hint == "" {
		return err
	}
	return &hintError{err: err, hint: hint}
}

// noCredentials reports whether err says that the SDK found no credentials anywhere: not in
// the environment, the shared files, a web identity or the instance's metadata.
func noCredentials(err error) bool {
	s := err.Error()
	return strings.Contains(s, "get credentials:") || strings.Contains(s, "failed to refresh cached credentials") ||
		strings.Contains(s, "failed to retrieve credentials")
}

// isMD5Hex reports whether an ETag looks like a single-part object's: the content MD5.
func isMD5Hex(s string) bool { return len(s) == 2*md5.Size && isHex(s) }

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func newBytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// payloadHashes carries the SHA-256s runall computed before an upload to the request
// signer. Over http:// the SDK signs each request's payload and would hash every byte a
// second time; over https:// the payload is otherwise unsigned, and this signs it for free.
// A file that changes between hashing and sending makes the server refuse the upload
// instead of storing bytes that do not match the recorded hash.
type payloadHashes struct {
	whole string   // PutObject
	parts []string // UploadPart, by part number
}

type payloadHashesKey struct{}

// presetPayloadHash hands payloadHashes from the context to the signer.
type presetPayloadHash struct{}

func (presetPayloadHash) ID() string { return "runall.PresetPayloadHash" }

func (presetPayloadHash) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error,
) {
	if ph, ok := ctx.Value(payloadHashesKey{}).(*payloadHashes); ok {
		switch p := in.Parameters.(type) {
		case *s3.PutObjectInput:
			if ph.whole != "" {
				ctx = v4.SetPayloadHash(ctx, ph.whole)
			}
		case *s3.UploadPartInput:
			if n := int(aws.ToInt32(p.PartNumber)); n >= 1 && n <= len(ph.parts) {
				ctx = v4.SetPayloadHash(ctx, ph.parts[n-1])
			}
		}
	}
	return next.HandleInitialize(ctx, in)
}

func addPresetPayloadHash(stack *middleware.Stack) error {
	return stack.Initialize.Add(presetPayloadHash{}, middleware.After)
}
