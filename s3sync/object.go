package s3sync

import (
	"context"
	"fmt"
	"sync"
)

// List calls fn with the s3:// URL and size of every object under the prefix rawURL, in
// key order.
func (c *Client) List(ctx context.Context, rawURL string, fn func(url string, size int64) error) error {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return err
	}
	err = c.store.list(ctx, loc.bucket, loc.key, func(o object) error {
		return fn("s3://"+loc.bucket+"/"+o.key, o.size)
	})
	if err != nil {
		return c.wrap(err, "list %s", rawURL)
	}
	return nil
}

// GetObject reads the object at rawURL whole; one larger than limit bytes is an error.
func (c *Client) GetObject(ctx context.Context, rawURL string, limit int64) ([]byte, error) {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return nil, err
	}
	o, err := c.store.head(ctx, loc.bucket, loc.key)
	if err != nil {
		return nil, c.wrap(err, "read %s", rawURL)
	}
	if o.size > limit {
		return nil, fmt.Errorf("read %s: %d bytes, more than the %d expected", rawURL, o.size, limit)
	}
	buf := &memWriterAt{}
	if _, err := c.store.download(ctx, transfer{bucket: loc.bucket, key: loc.key, size: o.size}, buf); err != nil {
		return nil, c.wrap(err, "read %s", rawURL)
	}
	return buf.b, nil
}

// memWriterAt is an io.WriterAt into memory, for parts arriving in any order.
type memWriterAt struct {
	mu sync.Mutex
	b  []byte
}

func (m *memWriterAt) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	copy(m.b[off:], p)
	return len(p), nil
}
