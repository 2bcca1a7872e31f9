package s3sync

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
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
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// store is what the sync engine needs from an object store. s3Store is the real one; the
// tests add an in-memory one.
type store interface {
	// list calls fn for every object under prefix, in key order.
	list(ctx context.Context, bucket, prefix string, fn func(object) error) error
	// head returns one object with its metadata, or an error wrapping errNotFound.
	head(ctx context.Context, bucket, key string) (object, error)
	// upload writes body (t.size bytes) as t.key, recording t.md5 in the object's metadata,
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
	md5  string // hex MD5 of the content when known from metadata (HEAD and GET only)
}

// transfer is one object to move.
type transfer struct {
	bucket, key string
	size        int64
	md5         string          // upload: the content's hex MD5, stored as metadata
	partSize    int64           // multipart part size and threshold; 0 = default
	progress    func(n int64) // bytes moved since the last call; nil = none
}

var errNotFound = errors.New("not found")

// metaMD5 is the user-metadata key (x-amz-meta-runall-md5) holding an object's content MD5,
// which ListObjectsV2 cannot tell for multipart objects (their ETag is not an MD5).
const metaMD5 = "runall-md5"

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
		md5:  md5FromMetadata(out.Metadata),
	}, nil
}

// md5FromMetadata finds a content MD5 in user metadata: runall's own, or rclone's
// md5chksum (base64), which rclone sets on its multipart uploads.
func md5FromMetadata(m map[string]string) string {
	if v := strings.ToLower(m[metaMD5]); isMD5Hex(v) {
		return v
	}
	if v, ok := m["md5chksum"]; ok {
		if b, err := base64.StdEncoding.DecodeString(v); err == nil && len(b) == md5.Size {
			return hex.EncodeToString(b)
		}
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
		if t.partSize > 0 {
			o.PartSizeBytes = t.partSize
			o.MultipartUploadThreshold = t.partSize
		} else {
			o.PartSizeBytes = defaultPartSize
			o.MultipartUploadThreshold = defaultPartSize
		}
		if t.progress != nil {
			o.ObjectProgressListeners.Register(&progressListener{fn: t.progress})
		}
	}
}

func (s *s3Store) upload(ctx context.Context, t transfer, body io.ReadSeeker) (string, error) {
	in := &transfermanager.UploadObjectInput{
		Bucket:        aws.String(t.bucket),
		Key:           aws.String(t.key),
		Body:          body,
		ContentLength: aws.Int64(t.size),
		Metadata:      map[string]string{metaMD5: t.md5},
	}
	if ct := mime.TypeByExtension(path.Ext(t.key)); ct != "" {
		in.ContentType = aws.String(ct)
	}
	out, err := s.tm.UploadObject(ctx, in, s.tmOptions(t))
	if err != nil {
		return "", err
	}
	return trimETag(out.ETag), nil
}

func (s *s3Store) download(ctx context.Context, t transfer, w io.WriterAt) (object, error) {
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
		md5:  md5FromMetadata(out.Metadata),
	}, nil
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

func isMD5Hex(s string) bool {
	if len(s) != 2*md5.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func newBytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
