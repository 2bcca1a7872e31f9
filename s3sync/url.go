package s3sync

import (
	"fmt"
	"strings"
)

// location is an s3://bucket/key URL taken apart.
type location struct {
	bucket, key string
}

func (l location) String() string { return "s3://" + l.bucket + "/" + l.key }

// isS3URL reports whether s names an S3 location rather than a local path.
func isS3URL(s string) bool { return strings.HasPrefix(s, "s3://") }

// parseS3URL splits s3://bucket/key. The key may be empty (the whole bucket) and keeps a
// trailing slash, which marks a prefix.
func parseS3URL(s string) (location, error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return location{}, fmt.Errorf("%q is not an s3:// URL", s)
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return location{}, fmt.Errorf("%q has no bucket: write s3://BUCKET/PREFIX", s)
	}
	return location{bucket: bucket, key: key}, nil
}

// dirPrefix is key as a prefix for a tree: empty or ending in a slash.
func dirPrefix(key string) string {
	if key == "" || strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}
