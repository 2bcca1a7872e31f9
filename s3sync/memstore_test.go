package s3sync

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// memStore is an in-memory store with S3's ETag rules (MD5 for single-part objects,
// MD5-of-part-MD5s "-N" for multipart ones), counters, and hooks to inject failures.
type memStore struct {
	mu      sync.Mutex
	objects map[string]memObject // bucket + "/" + key
	nextID  int

	lists, heads, uploads, downloads, removes atomic.Int64

	// failDownload, when set, is called mid-download and may return an error.
	failDownload func(key string) error
	// beforeUpload, when set, is called before an upload reads its body.
	beforeUpload func(key string)
}

type memObject struct {
	data []byte
	etag string
	meta map[string]string
}

func newMemStore() *memStore { return &memStore{objects: map[string]memObject{}} }

func memETag(data []byte, partSize int64) string {
	if partSize <= 0 {
		return md5Hex(data)
	}
	if int64(len(data)) < partSize {
		return md5Hex(data)
	}
	var sums []byte
	n := 0
	for off := int64(0); off < int64(len(data)); off += partSize {
		sum := md5.Sum(data[off:min(off+partSize, int64(len(data)))])
		sums = append(sums, sum[:]...)
		n++
	}
	all := md5.Sum(sums)
	return fmt.Sprintf("%s-%d", hex.EncodeToString(all[:]), n)
}

// putRaw stores an object as another tool would: no runall metadata.
func (s *memStore) putRaw(bucket, key string, data []byte, partSize int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[bucket+"/"+key] = memObject{data: data, etag: memETag(data, partSize)}
}

func (s *memStore) get(bucket, key string) (memObject, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[bucket+"/"+key]
	return o, ok
}

func (s *memStore) keys(bucket string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.objects {
		if b, key, _ := strings.Cut(k, "/"); b == bucket {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

func (s *memStore) list(ctx context.Context, bucket, prefix string, fn func(object) error) error {
	s.lists.Add(1)
	s.mu.Lock()
	var objs []object
	for k, o := range s.objects {
		b, key, _ := strings.Cut(k, "/")
		if b == bucket && strings.HasPrefix(key, prefix) {
			objs = append(objs, object{key: key, size: int64(len(o.data)), etag: o.etag})
		}
	}
	s.mu.Unlock()
	sort.Slice(objs, func(i, j int) bool { return objs[i].key < objs[j].key })
	for _, o := range objs {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

func (s *memStore) head(ctx context.Context, bucket, key string) (object, error) {
	s.heads.Add(1)
	o, ok := s.get(bucket, key)
	if !ok {
		return object{}, fmt.Errorf("head %s: %w", key, errNotFound)
	}
	got := object{key: key, size: int64(len(o.data)), etag: o.etag, sha: shaFromMetadata(o.meta)}
	got.crc, got.hasCRC = crcFromMetadata(o.meta)
	return got, nil
}

func (s *memStore) upload(ctx context.Context, t transfer, src io.ReaderAt) (string, error) {
	s.uploads.Add(1)
	if s.beforeUpload != nil {
		s.beforeUpload(t.key)
	}
	data, err := io.ReadAll(io.NewSectionReader(src, 0, t.size))
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Like a server checking each request's CRC32C.
	partSize := t.partSize
	if partSize == 0 {
		partSize = max(t.size, 1)
	}
	for i, c := range t.sums.parts {
		off := int64(i) * partSize
		if got := crc32.Checksum(data[off:min(off+partSize, int64(len(data)))], castagnoli()); got != c {
			return "", fmt.Errorf("upload %s part %d: BadDigest", t.key, i+1)
		}
	}
	if t.partSize > 0 {
		s.mu.Lock()
		s.nextID++
		id := fmt.Sprint(s.nextID)
		s.mu.Unlock()
		if t.track != nil {
			t.track(id, true)
		}
		if t.beforeComplete != nil {
			if err := t.beforeComplete(); err != nil {
				if t.track != nil {
					t.track(id, false)
				}
				return "", err
			}
		}
		if t.track != nil {
			defer t.track(id, false)
		}
	}
	etag := memETag(data, t.partSize)
	s.mu.Lock()
	s.objects[t.bucket+"/"+t.key] = memObject{data: data, etag: etag, meta: metadataOf(t.sums)}
	s.mu.Unlock()
	if t.progress != nil {
		t.progress(int64(len(data)))
	}
	return etag, nil
}

func (s *memStore) abortUpload(ctx context.Context, bucket, key, uploadID string) error { return nil }

func (s *memStore) download(ctx context.Context, t transfer, w io.WriterAt) (object, uint32, error) {
	s.downloads.Add(1)
	o, ok := s.get(t.bucket, t.key)
	if !ok {
		return object{}, 0, errNotFound
	}
	half := len(o.data) / 2
	if _, err := w.WriteAt(o.data[:half], 0); err != nil {
		return object{}, 0, err
	}
	if s.failDownload != nil {
		if err := s.failDownload(t.key); err != nil {
			return object{}, 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return object{}, 0, err
	}
	if _, err := w.WriteAt(o.data[half:], int64(half)); err != nil {
		return object{}, 0, err
	}
	got := object{key: t.key, size: int64(len(o.data)), etag: o.etag, sha: shaFromMetadata(o.meta)}
	got.crc, got.hasCRC = crcFromMetadata(o.meta)
	return got, crc32.Checksum(o.data, castagnoli()), nil
}

func (s *memStore) remove(ctx context.Context, bucket string, keys []string) error {
	s.removes.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.objects, bucket+"/"+k)
	}
	return nil
}

// newMemClient is a Client over a fresh memStore, keeping its records in a temp dir.
func newMemClient(t *testing.T) (*Client, *memStore) {
	t.Helper()
	st := newMemStore()
	return &Client{store: st, getenv: func(string) string { return "" }, logf: t.Logf}, st
}
