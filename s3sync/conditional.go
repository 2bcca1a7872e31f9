package s3sync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// Small objects written and read whole, with conditions: what a queue shared by several
// runall processes needs (see the claims package). Conditional writes are AWS S3's and
// MinIO's If-None-Match: * (create only) and If-Match: ETag (replace only that version).

// ErrPrecondition is a conditional write that lost: the object exists (If-None-Match) or
// is no longer the version named (If-Match).
var ErrPrecondition = errors.New("precondition failed")

// ErrNotExist is an object that is not there.
var ErrNotExist = errors.New("no such object")

// Condition is what a conditional write requires of the object it replaces. The zero value
// writes unconditionally.
type Condition struct {
	IfNoneMatch bool   // only when no object exists
	IfMatch     string // only when the object's ETag is this one
}

func (c *Client) api() (*s3.Client, error) {
	s, ok := c.store.(*s3Store)
	if !ok {
		return nil, errors.New("conditional writes need an S3 endpoint")
	}
	return s.api, nil
}

// PutIf writes body at rawURL under cond and returns the new ETag. A write whose condition
// fails returns an error wrapping ErrPrecondition.
func (c *Client) PutIf(ctx context.Context, rawURL string, body []byte, cond Condition) (string, error) {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return "", err
	}
	api, err := c.api()
	if err != nil {
		return "", err
	}
	in := &s3.PutObjectInput{
		Bucket: aws.String(loc.bucket), Key: aws.String(loc.key), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/json"),
	}
	if cond.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if cond.IfMatch != "" {
		in.IfMatch = aws.String(`"` + cond.IfMatch + `"`)
	}
	out, err := api.PutObject(ctx, in)
	if err != nil {
		if isPrecondition(err) {
			return "", fmt.Errorf("put %s: %w", rawURL, ErrPrecondition)
		}
		return "", c.wrap(err, "put %s", rawURL)
	}
	return trimETag(out.ETag), nil
}

// isPrecondition recognises a lost conditional write: 412, or AWS's 409 for two
// conditional writes to one key at the same moment.
func isPrecondition(err error) bool {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "PreconditionFailed", "ConditionalRequestConflict":
			return true
		}
	}
	var respErr interface{ HTTPStatusCode() int }
	return errors.As(err, &respErr) &&
		(respErr.HTTPStatusCode() == http.StatusPreconditionFailed || respErr.HTTPStatusCode() == http.StatusConflict)
}

// Get reads an object whole, with its ETag; one larger than limit bytes is an error. A
// missing object returns an error wrapping ErrNotExist.
func (c *Client) Get(ctx context.Context, rawURL string, limit int64) ([]byte, string, error) {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return nil, "", err
	}
	api, err := c.api()
	if err != nil {
		return nil, "", err
	}
	out, err := api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(loc.bucket), Key: aws.String(loc.key)})
	if err != nil {
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NoSuchKey" || apiErr.ErrorCode() == "NotFound") {
			return nil, "", fmt.Errorf("get %s: %w", rawURL, ErrNotExist)
		}
		return nil, "", c.wrap(err, "get %s", rawURL)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, "", c.wrap(err, "get %s", rawURL)
	}
	if int64(len(body)) > limit {
		return nil, "", fmt.Errorf("get %s: more than the %d bytes expected", rawURL, limit)
	}
	return body, trimETag(out.ETag), nil
}

// Delete removes an object; one that is not there is no error.
func (c *Client) Delete(ctx context.Context, rawURL string) error {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return err
	}
	api, err := c.api()
	if err != nil {
		return err
	}
	if _, err := api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(loc.bucket), Key: aws.String(loc.key)}); err != nil {
		return c.wrap(err, "delete %s", rawURL)
	}
	return nil
}

// Listed is an object found by List.
type Listed struct {
	URL  string // s3://bucket/key
	Rel  string // its key relative to the listed prefix
	ETag string
	Size int64
}

// List calls fn with every object under rawURL, a prefix (read as ending in "/"), in key
// order.
func (c *Client) List(ctx context.Context, rawURL string, fn func(Listed) error) error {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return err
	}
	prefix := dirPrefix(loc.key)
	err = c.store.list(ctx, loc.bucket, prefix, func(o object) error {
		return fn(Listed{URL: "s3://" + loc.bucket + "/" + o.key, Rel: strings.TrimPrefix(o.key, prefix), ETag: o.etag, Size: o.size})
	})
	if err != nil {
		return c.wrap(err, "list %s", location{loc.bucket, prefix})
	}
	return nil
}
