package s3sync

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"mime"
	"path"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// How bytes move: every part of every file is a request of its own, sent straight from the
// file (with sendfile(2) where it can, see fromFile; else a section reader, which a retry
// seeks back), or for a download written straight at its offset. The requests of all files
// share the store's slots.

// connsPerHost is the number of requests moving bytes at once, per client, and the HTTP
// client's idle connections per host: each slot keeps its connection.
const connsPerHost = 16

// maxParts is S3's limit on the parts of one multipart upload.
const maxParts = 10000

// autoPartSize picks a part (or range) size for an object of size bytes: enough parts to
// keep every slot busy on one large file, few enough that per-request costs do not
// dominate, and never more than maxParts.
func autoPartSize(size int64) int64 {
	const lo, hi = 8 << 20, 64 << 20
	p := min(max(size/connsPerHost, lo), hi)
	p = (p + 1<<20 - 1) &^ (1<<20 - 1) // whole MiB
	return fixPartSize(size, p)
}

// fixPartSize raises want when size would need more than maxParts parts.
func fixPartSize(size, want int64) int64 {
	if n := (size + want - 1) / want; n > maxParts {
		return (size + maxParts - 1) / maxParts
	}
	return want
}

// acquire takes a slot, or gives up when ctx ends.
func (s *s3Store) acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *s3Store) release() { <-s.slots }

// unsigned sends a request's payload unsigned: its integrity rests on the CRC32C header
// the server verifies, so the signer need not hash every byte with SHA-256 too (see
// docs/s3.md for the trade-off over plain HTTP).
var unsigned = s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)

// sendOptions are the options of a request that sends the n bytes of src at off.
func sendOptions(src io.ReaderAt, off, n int64, progress func(int64)) []func(*s3.Options) {
	if o := fromFile(src, off, n, progress); o != nil {
		return []func(*s3.Options){unsigned, o}
	}
	return []func(*s3.Options){unsigned}
}

func contentType(key string) *string {
	if ct := mime.TypeByExtension(path.Ext(key)); ct != "" {
		return aws.String(ct)
	}
	return nil
}

func metadataOf(sm sums) map[string]string {
	m := map[string]string{metaCRC32C: crcHex(sm.crc)}
	if sm.sha != "" {
		m[metaSHA256] = sm.sha
	}
	return m
}

func (s *s3Store) upload(ctx context.Context, t transfer, src io.ReaderAt) (string, error) {
	if t.partSize > 0 {
		return s.multipart(ctx, t, src)
	}
	if err := s.acquire(ctx); err != nil {
		return "", err
	}
	defer s.release()
	body := &progressReader{r: io.NewSectionReader(src, 0, t.size), fn: t.progress}
	out, err := s.api.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(t.bucket), Key: aws.String(t.key), Body: body,
		ContentLength: aws.Int64(t.size), Metadata: metadataOf(t.sums), ContentType: contentType(t.key),
		ChecksumCRC32C: aws.String(crcBase64(t.sums.crc)),
	}, sendOptions(src, 0, t.size, t.progress)...)
	if err != nil {
		return "", err
	}
	return trimETag(out.ETag), nil
}

// progressReader reports the bytes read from r, once each: a retry that seeks back and
// reads them again does not count them twice.
type progressReader struct {
	r        io.ReadSeeker
	fn       func(int64)
	pos, max int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.pos += int64(n)
	if p.pos > p.max {
		if p.fn != nil {
			p.fn(p.pos - p.max)
		}
		p.max = p.pos
	}
	return n, err
}

func (p *progressReader) Seek(offset int64, whence int) (int64, error) {
	pos, err := p.r.Seek(offset, whence)
	if err == nil {
		p.pos = pos
	}
	return pos, err
}

// errObjectChanged says that an object was replaced between its listing and its download.
var errObjectChanged = errors.New("the object changed while it was downloaded; sync again")

// getAttempts bounds the retries of a GET whose body breaks off: the SDK retries failed
// requests, not bodies that stop half-way. Each retry asks for the rest only.
const getAttempts = 5

// copyBufSize is each download worker's buffer.
const copyBufSize = 256 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

func (s *s3Store) download(ctx context.Context, t transfer, w io.WriterAt) (object, uint32, error) {
	ranges := int64(1)
	if t.partSize > 0 && t.size > t.partSize {
		ranges = (t.size + t.partSize - 1) / t.partSize
	}
	if ranges == 1 {
		if err := s.acquire(ctx); err != nil {
			return object{}, 0, err
		}
		defer s.release()
		return s.getRange(ctx, t, w, 0, t.size, ranges == 1)
	}

	crcs := make([]uint32, ranges)
	var first object
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for i := range ranges {
		if err := s.acquire(dctx); err != nil {
			break
		}
		off := i * t.partSize
		n := min(t.partSize, t.size-off)
		wg.Go(func() {
			defer s.release()
			o, crc, err := s.getRange(dctx, t, w, off, n, false)
			if err != nil {
				cancel(err)
				return
			}
			crcs[i] = crc
			if i == 0 {
				first = o
			}
		})
	}
	wg.Wait()
	if err := context.Cause(dctx); err != nil {
		return object{}, 0, err
	}
	var crc uint32
	for i, c := range crcs {
		crc = crcCombine(crc, c, min(t.partSize, t.size-int64(i)*t.partSize))
	}
	first.size = t.size
	return first, crc, nil
}

// rangeInput is the GET of t's object from byte from to byte to, or of all of it; of the
// version t names, when it names one.
func rangeInput(t transfer, from, to int64, all bool) *s3.GetObjectInput {
	in := &s3.GetObjectInput{Bucket: aws.String(t.bucket), Key: aws.String(t.key)}
	if !all {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", from, to))
	}
	if t.etag != "" {
		in.IfMatch = aws.String(`"` + t.etag + `"`)
	}
	return in
}

// objectOf is what a GET's answer tells of the object at key: its ETag, its sums, and
// whether its ETag is its MD5.
func objectOf(key string, out *s3.GetObjectOutput) object {
	o := object{key: key, etag: trimETag(out.ETag), sha: shaFromMetadata(out.Metadata)}
	o.crc, o.hasCRC = crcFromMetadata(out.Metadata)
	o.plainETag = isMD5Hex(o.etag) && out.ServerSideEncryption != s3types.ServerSideEncryptionAwsKms &&
		out.ServerSideEncryption != s3types.ServerSideEncryptionAwsKmsDsse && out.SSECustomerAlgorithm == nil
	return o
}

// getRange writes n bytes of the object from off into w at off, and returns the object's
// ETag and metadata and the CRC32C of the bytes. whole: one GET of the whole object, of
// whatever size it has now.
func (s *s3Store) getRange(ctx context.Context, t transfer, w io.WriterAt, off, n int64, whole bool) (object, uint32, error) {
	bufp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bufp)
	buf := *bufp
	var crc uint32
	var got int64
	var lastErr error
	for range getAttempts {
		out, err := s.api.GetObject(ctx, rangeInput(t, off+got, off+n-1, whole && got == 0))
		if err != nil {
			if t.etag != "" && isPrecondition(err) {
				return object{}, 0, fmt.Errorf("%w (%w)", errObjectChanged, err)
			}
			return object{}, 0, err
		}
		o := objectOf(t.key, out)
		if whole && got == 0 {
			n = aws.ToInt64(out.ContentLength)
		}
		// Whole buffers: one write system call per 256 KiB, not one per TCP read.
		for got < n {
			k, rerr := io.ReadFull(out.Body, buf[:min(int64(len(buf)), n-got)])
			if k > 0 {
				if _, err := w.WriteAt(buf[:k], off+got); err != nil {
					out.Body.Close()
					return object{}, 0, err
				}
				crc = crc32.Update(crc, castagnoli(), buf[:k])
				got += int64(k)
				if t.progress != nil {
					t.progress(int64(k))
				}
			}
			if rerr != nil {
				if rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
					lastErr = rerr
				}
				break
			}
		}
		out.Body.Close()
		if got == n {
			o.size = n
			return o, crc, nil
		}
		if ctx.Err() != nil {
			return object{}, 0, ctx.Err()
		}
		if lastErr == nil {
			lastErr = fmt.Errorf("body ended after %d of %d bytes", got, n)
		}
	}
	return object{}, 0, fmt.Errorf("read s3://%s/%s: %w", t.bucket, t.key, lastErr)
}
