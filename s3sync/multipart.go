package s3sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// A multipart upload's life: create (tracked open in the sync's record), send the parts,
// complete (tracked closed), or abort on any failure (tracked closed once the abort is
// done; one that cannot be aborted stays recorded for the next sync, see abortLeftUploads).
//
//	create ──▶ parts ──▶ complete ──▶ done
//	  ▲                     │ the server lost parts or the upload (a restart): abort, and
//	  └─────────────────────┘ send the whole file again as a new upload, once

// uploadTries is how many multipart uploads one file gets: a server that restarts may lose
// parts it acknowledged, and only a new upload can replace them; a second loss is not a
// restart that a new upload would ride out.
const uploadTries = 2

// abortTimeout bounds the abort of a failed or cancelled upload: a SIGTERM must not wait
// on a server that is gone (the next sync aborts what is left, see abortLeftUploads).
const abortTimeout = 5 * time.Second

// multipart uploads src as a multipart upload, and again as a new one when completing the
// first finds parts or the upload lost. Progress counts each byte of the file once: the
// bytes sent again are not counted a second time (see highWater).
func (s *s3Store) multipart(ctx context.Context, t transfer, src io.ReaderAt) (string, error) {
	var hw *highWater
	if t.progress != nil {
		hw = &highWater{fn: t.progress}
	}
	for try := 1; ; try++ {
		if hw != nil {
			t.progress = hw.try()
		}
		etag, lost, err := s.multipartOnce(ctx, t, src)
		if !lost || try == uploadTries || ctx.Err() != nil {
			return etag, err
		}
		s.logf("S3 lost parts of the upload of s3://%s/%s, sending the whole file again as a new upload (attempt %d of %d): %v",
			t.bucket, t.key, try+1, uploadTries, err)
	}
}

// multipartOnce is one multipart upload of src, aborted if it fails. lost: completing it
// failed because the server no longer has its parts or the upload itself.
func (s *s3Store) multipartOnce(ctx context.Context, t transfer, src io.ReaderAt) (etag string, lost bool, err error) {
	created, err := s.api.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: aws.String(t.bucket), Key: aws.String(t.key),
		Metadata: metadataOf(t.sums), ContentType: contentType(t.key),
		ChecksumAlgorithm: s3types.ChecksumAlgorithmCrc32c,
	})
	if err != nil {
		return "", false, err
	}
	id := aws.ToString(created.UploadId)
	if t.track != nil {
		t.track(id, true)
	}
	defer func() {
		if err == nil {
			if t.track != nil {
				t.track(id, false)
			}
			return
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		if aerr := s.abortUpload(actx, t.bucket, t.key, id); aerr == nil && t.track != nil {
			t.track(id, false)
		}
	}()

	parts, err := s.sendParts(ctx, t, src, id)
	if err != nil {
		return "", false, err
	}
	if t.beforeComplete != nil {
		if err := t.beforeComplete(); err != nil {
			return "", false, err
		}
	}
	done, err := s.api.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(t.bucket), Key: aws.String(t.key), UploadId: aws.String(id),
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		// NoSuchUpload also answers a retried Complete whose first try succeeded but whose
		// answer was lost: sending again costs the bytes, not correctness.
		code := apiCode(err)
		return "", code == "InvalidPart" || code == "NoSuchUpload", err
	}
	return trimETag(done.ETag), false, nil
}

// sendParts sends t's parts of the multipart upload id from src, as many at once as the
// store's slots allow; the first that fails stops the rest.
func (s *s3Store) sendParts(ctx context.Context, t transfer, src io.ReaderAt, id string) ([]s3types.CompletedPart, error) {
	parts := make([]s3types.CompletedPart, len(t.sums.parts))
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for i, crc := range t.sums.parts {
		if err := s.acquire(pctx); err != nil {
			break
		}
		off := int64(i) * t.partSize
		n := min(t.partSize, t.size-off)
		wg.Go(func() {
			defer s.release()
			num := int32(i + 1)
			sum := crcBase64(crc)
			out, err := s.api.UploadPart(pctx, &s3.UploadPartInput{
				Bucket: aws.String(t.bucket), Key: aws.String(t.key), UploadId: aws.String(id),
				PartNumber: aws.Int32(num), ContentLength: aws.Int64(n),
				Body:           &progressReader{r: io.NewSectionReader(src, off, n), fn: t.progress},
				ChecksumCRC32C: aws.String(sum),
			}, sendOptions(src, off, n, t.progress)...)
			if err != nil {
				cancel(fmt.Errorf("part %d: %w", num, err))
				return
			}
			parts[i] = s3types.CompletedPart{PartNumber: aws.Int32(num), ETag: out.ETag, ChecksumCRC32C: aws.String(sum)}
		})
	}
	wg.Wait()
	return parts, context.Cause(pctx)
}

func (s *s3Store) abortUpload(ctx context.Context, bucket, key, uploadID string) error {
	_, err := s.api.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: aws.String(bucket), Key: aws.String(key), UploadId: aws.String(uploadID),
	})
	var nsu *s3types.NoSuchUpload
	if errors.As(err, &nsu) || apiCode(err) == "NoSuchUpload" {
		return nil
	}
	return err
}

// apiCode is the S3 error code err carries ("InvalidPart"), or "".
func apiCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// highWater reports the bytes of a file sent whole more than once to fn once each: each try
// counts what it sent, and fn hears only of what goes past the most any try has sent. While
// a new upload sends again what the first sent, progress stands still.
type highWater struct {
	fn  func(int64)
	mu  sync.Mutex
	max int64 // the bytes fn has heard of
}

// try is the progress function of one more try at sending the file.
func (h *highWater) try() func(int64) {
	var sent int64 // guarded by h.mu
	return func(n int64) {
		h.mu.Lock()
		defer h.mu.Unlock()
		sent += n
		if sent > h.max {
			h.fn(sent - h.max)
			h.max = sent
		}
	}
}
