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
)

// Upload: a local file or tree to an object or prefix.

func (j *job) upload(ctx context.Context, src, dst string) error {
	loc, err := parseS3URL(dst)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(src)
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
		if j.opts.Delete {
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
		obj, err := j.c.store.head(ctx, loc.bucket, key)
		switch {
		case err == nil:
			p.remote = &obj
		case !errors.Is(err, errNotFound):
			return j.c.wrap(err, "check %s", remote)
		}
		pairs = append(pairs, p)
	case fi.IsDir():
		prefix := dirPrefix(loc.key)
		remote = location{loc.bucket, prefix}.String()
		pairs, orphans, err = j.pairTree(ctx, abs, loc.bucket, prefix, true)
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("sync from %s: not a regular file or directory", src)
	}
	j.rec = loadRecord(recordPath(j.stateDir, j.c.endpoint, abs, remote), abs, remote)
	return j.execute(ctx, pairs, orphans, loc.bucket, true)
}

// put uploads one file. Small files are read once into memory; larger ones are read once
// to hash them (whole and by part, see payloadHashes) and again to send them.
func (j *job) put(ctx context.Context, bucket string, p *pair) error {
	url := location{bucket, p.key}.String()
	f, err := os.Open(p.path)
	if err != nil {
		return fmt.Errorf("upload %s: %w", p.path, err)
	}
	defer f.Close()
	// Stat before reading: if the file changes while we read it, its new stamp will not
	// match the one recorded, and the next sync looks again.
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("upload %s: %w", p.path, err)
	}
	seen := time.Now()
	st := statStamp(fi)
	t := transfer{bucket: bucket, key: p.key, partSize: j.opts.PartSize}
	var body io.ReadSeeker
	if st.Size < j.opts.PartSize {
		buf := make([]byte, st.Size)
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("upload %s: %w", p.path, err)
		}
		buf = buf[:n]
		st.Size = int64(n)
		t.sha = sha256Hex(buf)
		body = bytes.NewReader(buf)
	} else {
		t.partSize = partSizeFor(st.Size, j.opts.PartSize)
		if t.sha, t.partSHAs, err = hashParts(f, st.Size, t.partSize); err != nil {
			return fmt.Errorf("upload %s: hash: %w", p.path, err)
		}
		body = io.NewSectionReader(f, 0, st.Size)
	}
	t.size = st.Size
	release, err := j.bigTransfer(ctx, st.Size)
	if err != nil {
		return err
	}
	defer release()
	cnt := &counter{m: j.m}
	t.progress = cnt.add
	etag, err := j.c.store.upload(ctx, t, body)
	cnt.finish(st.Size, err == nil)
	if fi2, serr := f.Stat(); serr != nil || statStamp(fi2) != statStamp(fi) {
		// The signed payload hashes make the server refuse bytes that changed after
		// hashing; either way the next sync looks at the file again.
		j.rec.drop(p.rel)
		if err != nil {
			return fmt.Errorf("upload %s: the file changed while it was uploaded; sync again when it is complete (%w)", p.path, err)
		}
		j.c.logf("%s changed while it was uploaded; the next sync uploads it again", p.path)
		return nil
	}
	if err != nil {
		return j.c.wrap(err, "upload %s to %s", p.path, url)
	}
	j.rec.put(p.rel, entry{Size: st.Size, MTime: st.MTime, SHA: t.sha, ETag: etag, Racy: isRacy(st.MTime, seen)})
	return nil
}
