package s3sync

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
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
	// upload writes the first t.size bytes of src as t.key, with t.sums in its metadata,
	// and returns the new ETag. The object appears whole or not at all.
	upload(ctx context.Context, t transfer, src io.ReaderAt) (etag string, err error)
	// download writes the object into w and returns what it read (ETag and metadata of
	// the version it got) and the CRC32C of the bytes it wrote.
	download(ctx context.Context, t transfer, w io.WriterAt) (object, uint32, error)
	// abortUpload discards a multipart upload; one that is gone already is not an error.
	abortUpload(ctx context.Context, bucket, key, uploadID string) error
	// remove deletes keys; absent keys are not an error.
	remove(ctx context.Context, bucket string, keys []string) error
}

// object is what a listing or a HEAD tells about an object.
type object struct {
	key    string
	size   int64
	etag   string // without quotes
	sha    string // hex SHA-256 of the content, from metadata (HEAD and GET only)
	crc    uint32 // CRC32C of the content, from metadata, when hasCRC
	hasCRC bool
	// plainETag: the ETag is the content's MD5 (GET only: a single-part object stored
	// without SSE-KMS or SSE-C, which make it something else).
	plainETag bool
}

// transfer is one object to move.
type transfer struct {
	bucket, key string
	size        int64
	// partSize splits the transfer: upload, the size of each part of a multipart upload
	// (0: one PUT); download, the size of each ranged GET (0 or >= size: one GET).
	partSize int64
	progress func(n int64) // bytes moved since the last call; nil = none

	// upload
	sums  sums                             // checksums of the content, sums.parts by part
	track func(uploadID string, open bool) // a multipart upload begun (open) and ended; nil = none
	// beforeComplete is a last check before a multipart upload's parts become the object:
	// an error aborts the upload instead. nil = none.
	beforeComplete func() error

	// download
	etag string // the version to read, from the listing: every range must come from it
}

var errNotFound = errors.New("not found")

// metaSHA256 is the user-metadata key (x-amz-meta-runall-sha256) holding the content
// SHA-256 of an object runall uploaded from memory (under smallFile); `sha256sum` can check
// it. Larger objects carry only their CRC32C (metaCRC32C): see sumFile.
const metaSHA256 = "runall-sha256"

// defaultPartSize is the multipart part size, also the size from which uploads go
// multipart and downloads fetch ranges in parallel.
const defaultPartSize = 8 << 20

// minPartSize is S3's smallest part.
const minPartSize = 5 << 20

type s3Store struct {
	api *s3.Client
	// slots bounds the requests that move an object's bytes (a part, a range, a small
	// object), over all files and syncs of a client: one pool of workers, sized with the
	// HTTP client's connections per host.
	slots chan struct{}
	// logf is the client's retry log (credentials scrubbed): what the store retries beyond
	// the SDK's own retries, it says there.
	logf func(string, ...any)
}

func newS3Store(api *s3.Client, logf func(string, ...any)) *s3Store {
	return &s3Store{api: api, slots: make(chan struct{}, connsPerHost), logf: logf}
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
	o := object{
		key:  key,
		size: aws.ToInt64(out.ContentLength),
		etag: trimETag(out.ETag),
		sha:  shaFromMetadata(out.Metadata),
	}
	o.crc, o.hasCRC = crcFromMetadata(out.Metadata)
	return o, nil
}

// shaFromMetadata returns the content SHA-256 that runall stored, or "".
func shaFromMetadata(m map[string]string) string {
	if v := strings.ToLower(m[metaSHA256]); len(v) == 2*sha256.Size && isHex(v) {
		return v
	}
	return ""
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
