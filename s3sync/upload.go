package s3sync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runall/runall/internal/pathname"
)

// Upload: a local file or tree to an object or prefix.

// uploader is a job's upload side: it reads local files, sends them, and records what it
// sent in the job's record.
type uploader struct{ j *job }

func (u uploader) upload(ctx context.Context, src, dst string) error {
	loc, err := parseS3URL(dst)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(pathname.Clean(src)) // a ".." after a link taken where the link leads
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("sync from %s: %w", src, err)
	}
	var pairs []*pair
	var orphans []*pair // objects with no local file
	var remote string
	switch {
	case fi.Mode().IsRegular():
		if u.j.opts.Delete {
			return fmt.Errorf("--delete needs a directory source; %s is a file", src)
		}
		key := loc.key
		if key == "" || strings.HasSuffix(key, "/") {
			key += filepath.Base(abs)
		}
		remote = location{loc.bucket, key}.String()
		p := &pair{rel: filepath.Base(abs), path: abs, key: key, seen: time.Now()}
		st := statStamp(fi)
		p.local = &st
		obj, err := u.j.c.store.head(ctx, loc.bucket, key)
		switch {
		case err == nil:
			p.remote = &obj
		case !errors.Is(err, errNotFound):
			return u.j.c.wrap(err, "check %s", remote)
		}
		pairs = append(pairs, p)
	case fi.IsDir():
		prefix := dirPrefix(loc.key)
		remote = location{loc.bucket, prefix}.String()
		pairs, orphans, err = u.j.pairTree(ctx, abs, loc.bucket, prefix, true)
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("sync from %s: not a regular file or directory", src)
	}
	u.j.rec = loadRecord(recordPath(u.j.stateDir, u.j.c.endpoint, abs, remote), abs, remote)
	if !u.j.opts.DryRun {
		u.abortLeftUploads(ctx)
	}
	return u.j.execute(ctx, pairs, orphans, loc.bucket, true)
}

// smallFile is the size below which a file is read into memory once, checksummed and sent
// from the same bytes; larger files are read once to checksum them and sent from the file.
const smallFile = 1 << 20

// errChanged says that a file changed between the first read and the end of its upload.
var errChanged = errors.New("the file changed while it was uploaded; sync again when it is complete")

// put uploads one file. The object is one complete version of the file or is not written:
// the checksums of the first read go with every part and the server refuses bytes that
// differ from them, and the file's identity, size and mtime are compared before the first
// byte is sent and again before a multipart upload is completed.
func (u uploader) put(ctx context.Context, bucket string, p *pair) error {
	url := location{bucket, p.key}.String()
	f, err := os.Open(p.path)
	if err != nil {
		return fmt.Errorf("upload %s: %w", p.path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("upload %s: %w", p.path, err)
	}
	seen := time.Now()
	st := statStamp(fi)
	cnt := &counter{m: u.j.m}
	t := transfer{bucket: bucket, key: p.key, size: st.Size, progress: cnt.add}
	src, err := u.readSums(ctx, &t, f, p.path, fi)
	if err != nil {
		return err
	}
	if u.changed(f, p.path, fi) {
		u.j.rec.drop(p.rel)
		return fmt.Errorf("upload %s: %w", p.path, errChanged)
	}
	t.beforeComplete = func() error {
		if u.changed(f, p.path, fi) {
			return errChanged
		}
		return nil
	}
	t.track = func(id string, open bool) { u.j.rec.trackUpload(bucket, p.key, id, open) }
	etag, err := u.j.c.store.upload(ctx, t, src)
	cnt.finish(st.Size, err == nil)
	if u.changed(f, p.path, fi) {
		u.j.rec.drop(p.rel)
		if errors.Is(err, errChanged) {
			return fmt.Errorf("upload %s: %w", p.path, err)
		}
		if err != nil {
			return fmt.Errorf("upload %s: %w (%w)", p.path, errChanged, err)
		}
		// The object holds the version read before the change, whole.
		u.j.c.logf("%s changed while it was uploaded; uploaded the version before the change, the next sync uploads the new one", p.path)
		return nil
	}
	if err != nil {
		return u.j.c.wrap(err, "upload %s to %s", p.path, url)
	}
	u.j.rec.put(p.rel, entry{Size: st.Size, MTime: st.MTime, SHA: t.sums.sha, CRC: crcHex(t.sums.crc),
		ETag: etag, Racy: isRacy(st.MTime, seen)})
	return nil
}

// readSums reads the file open as f (first seen as fi) for t's checksums, and returns
// what t uploads: the file, or what was read of a small one. A read that fails because the
// file changed is no error here: the caller sees the change.
func (u uploader) readSums(ctx context.Context, t *transfer, f *os.File, path string, fi os.FileInfo) (io.ReaderAt, error) {
	if t.size < smallFile {
		buf := make([]byte, t.size)
		if _, err := io.ReadFull(f, buf); err != nil && !u.changed(f, path, fi) {
			return nil, fmt.Errorf("upload %s: %w", path, err)
		}
		t.sums = sumBytes(buf)
		return bytes.NewReader(buf), nil
	}
	t.partSize = u.j.partSize(t.size)
	var err error
	if t.sums, err = sumFile(ctx, f, t.size, t.partSize); err != nil && !u.changed(f, path, fi) {
		return nil, fmt.Errorf("upload %s: read: %w", path, err)
	}
	return f, nil
}

// changed reports whether the file open as f, first seen as fi, is no longer that version:
// written to (size or mtime), or replaced at path by another file.
func (u uploader) changed(f *os.File, path string, fi os.FileInfo) bool {
	now, err := f.Stat()
	if err != nil || !sameVersion(fi, now) {
		return true
	}
	now, err = os.Stat(path)
	return err != nil || !sameVersion(fi, now)
}

func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// abortLeftUploads aborts the multipart uploads that an earlier sync of the same pair began
// and could not finish or abort (killed, or the server went away): they would hold their
// parts' storage forever. One that fails to abort stays recorded for the next sync.
func (u uploader) abortLeftUploads(ctx context.Context) {
	for _, left := range u.j.rec.openUploads() {
		if err := u.j.c.store.abortUpload(ctx, left.Bucket, left.Key, left.ID); err != nil {
			u.j.c.logf("%v", u.j.c.wrap(err, "abort an unfinished upload of %s", location{left.Bucket, left.Key}))
			continue
		}
		u.j.rec.trackUpload(left.Bucket, left.Key, left.ID, false)
	}
}
