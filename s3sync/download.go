package s3sync

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/runall/runall/internal/pathname"
)

// Download: an object or prefix into a local directory, or an archive object unpacked there.

// downloader is a job's download side: it writes below the job's root and records what
// it fetched in the job's record.
type downloader struct{ j *job }

func (d downloader) download(ctx context.Context, src, dst string) error {
	loc, err := parseS3URL(src)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(pathname.Clean(dst)) // a ".." after a link taken where the link leads
	if err != nil {
		return err
	}
	var single *object
	if loc.key != "" && !strings.HasSuffix(loc.key, "/") {
		obj, err := d.j.c.store.head(ctx, loc.bucket, loc.key)
		switch {
		case err == nil:
			single = &obj
		case !errors.Is(err, errNotFound):
			return d.j.c.wrap(err, "check %s", src)
		}
	}
	if d.j.opts.Extract && single == nil {
		return fmt.Errorf("extract: %s is not an object (a prefix cannot be extracted)", src)
	}
	if single != nil && d.j.opts.Delete {
		return fmt.Errorf("--delete needs a prefix source; %s is one object", src)
	}
	if single != nil {
		if err := d.openRoot(abs); err != nil {
			return err
		}
		remote := loc.String()
		d.j.rec = loadRecord(recordPath(d.j.stateDir, d.j.c.endpoint, abs, remote), abs, remote)
		if d.j.opts.Extract {
			return d.extractObject(ctx, loc.bucket, *single, abs)
		}
		rel := path.Base(single.key)
		p := &pair{rel: rel, path: filepath.Join(abs, rel), key: single.key, remote: single, seen: time.Now()}
		if fi, err := os.Stat(p.path); err == nil && fi.Mode().IsRegular() {
			st := statStamp(fi)
			p.local = &st
		}
		return d.j.execute(ctx, []*pair{p}, nil, loc.bucket, false)
	}

	prefix := dirPrefix(loc.key)
	remote := location{loc.bucket, prefix}.String()
	pairs, orphans, err := d.j.pairTree(ctx, abs, loc.bucket, prefix, false)
	if err != nil {
		return err
	}
	if len(pairs) == 0 && !strings.HasSuffix(loc.key, "/") && loc.key != "" {
		return fmt.Errorf("sync from %s: no such object or prefix (end the URL with / to sync an empty prefix)", src)
	}
	if err := d.openRoot(abs); err != nil {
		return err
	}
	d.j.rec = loadRecord(recordPath(d.j.stateDir, d.j.c.endpoint, abs, remote), abs, remote)
	return d.j.execute(ctx, pairs, orphans, loc.bucket, false)
}

// openRoot creates the destination directory and opens it as the root every download
// writes under: os.Root refuses paths that leave it, through ".." or symlinks.
func (d downloader) openRoot(dir string) error {
	if d.j.opts.DryRun {
		if _, err := os.Stat(dir); err != nil {
			return nil // nothing there yet; a dry run creates nothing
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create destination: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("destination %s must be a directory: %w", dir, err)
	}
	d.j.root = root
	return nil
}

// get downloads one object to a temp file next to its destination and renames it into
// place: the file is whole or not there at all.
func (d downloader) get(ctx context.Context, bucket string, p *pair) error {
	url := location{bucket, p.key}.String()
	obj, st, err := d.fetch(ctx, bucket, *p.remote, p.rel, p.rel)
	if err != nil {
		return d.j.c.wrap(err, "download %s to %s", url, p.path)
	}
	e := entry{Size: st.Size, MTime: st.MTime, SHA: obj.sha, ETag: obj.etag}
	if obj.hasCRC {
		e.CRC = crcHex(obj.crc)
	}
	d.j.rec.put(p.rel, e)
	return nil
}

// emptySHA is the SHA-256 of no bytes.
const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// fetch downloads obj into a temp file next to rel (under the root) and renames it to
// dest; dest "" keeps the temp file and returns its name in obj.key. On any error the temp
// file is removed.
func (d downloader) fetch(ctx context.Context, bucket string, obj object, rel, dest string) (object, stamp, error) {
	if dir := path.Dir(rel); dir != "." {
		if err := d.j.root.MkdirAll(dir, 0o755); err != nil {
			return object{}, stamp{}, err
		}
	}
	tmp := tempName(rel)
	f, err := d.j.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return object{}, stamp{}, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			d.j.root.Remove(tmp)
		}
	}()
	got := object{key: obj.key, etag: obj.etag, sha: emptySHA}
	if obj.size > 0 {
		if obj.size >= defaultPartSize {
			preallocate(f, obj.size)
		}
		cnt := &counter{m: d.j.m}
		var crc uint32
		got, crc, err = d.j.c.store.download(ctx, transfer{
			bucket: bucket, key: obj.key, size: obj.size, etag: obj.etag,
			partSize: d.j.partSize(obj.size), progress: cnt.add,
		}, f)
		if err == nil {
			err = verify(ctx, f, got, crc)
		}
		cnt.finish(obj.size, err == nil)
		if err != nil {
			return object{}, stamp{}, err
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return object{}, stamp{}, err
	}
	if fi.Size() != got.size && obj.size > 0 {
		return object{}, stamp{}, fmt.Errorf("got %d bytes, want %d", fi.Size(), got.size)
	}
	if err := f.Close(); err != nil {
		return object{}, stamp{}, err
	}
	if dest == "" {
		ok = true
		got.key = tmp
		return got, statStamp(fi), nil
	}
	if err := d.j.root.Rename(tmp, dest); err != nil {
		return object{}, stamp{}, err
	}
	ok = true
	return got, statStamp(fi), nil
}

// extractObject downloads one archive object and unpacks it into dir, unless the record
// shows this very archive already unpacked there with its files untouched.
func (d downloader) extractObject(ctx context.Context, bucket string, obj object, dir string) error {
	url := location{bucket, obj.key}.String()
	if a := d.j.rec.archive(); a != nil && a.Key == obj.key && a.ETag == obj.etag && a.Size == obj.size && d.intact(a.Files) {
		d.j.m.n.skipped.Add(1)
		d.j.m.n.skippedBytes.Add(obj.size)
		return nil
	}
	act := Action{Op: OpExtract, Path: dir, URL: url, Size: obj.size}
	d.j.m.n.scanning.Store(false)
	d.j.m.n.filesTotal.Add(1)
	d.j.m.n.bytesTotal.Add(obj.size)
	if d.j.opts.DryRun {
		d.j.m.n.files.Add(1)
		d.j.m.n.bytes.Add(obj.size)
		d.j.m.action(act)
		return nil
	}
	got, _, err := d.fetch(ctx, bucket, obj, path.Base(obj.key), "")
	if err != nil {
		return d.j.c.wrap(err, "download %s", url)
	}
	defer d.j.root.Remove(got.key)
	files, err := extractFile(ctx, filepath.Join(dir, got.key), path.Base(obj.key), dir, d.j.ex)
	if err != nil {
		return fmt.Errorf("extract %s: %w", url, err)
	}
	d.j.rec.setArchive(&archiveEntry{Key: obj.key, ETag: got.etag, Size: obj.size, Files: files})
	d.j.rec.rec.Files = map[string]entry{}
	if err := d.j.rec.save(); err != nil {
		d.j.c.logf("%v", err)
	}
	d.j.m.n.files.Add(1)
	d.j.m.action(act)
	return nil
}

// intact reports whether the files an archive made are all still there, unchanged.
func (d downloader) intact(files map[string]stamp) bool {
	if d.j.root == nil {
		return false
	}
	for rel, st := range files {
		fi, err := d.j.root.Lstat(rel)
		if err != nil || !fi.Mode().IsRegular() || statStamp(fi) != st {
			return false
		}
	}
	return true
}

// errCorrupt says that downloaded bytes do not match the object's checksum.
var errCorrupt = errors.New("the downloaded bytes do not match the object's checksum; nothing was written (try again)")

// verify checks the downloaded file f against what the object says of its content: the
// CRC32C runall stored (computed while writing: free), else the SHA-256 runall stored, else
// a single-part object's ETag, its MD5 (both cost a read of the file).
func verify(ctx context.Context, f *os.File, got object, crc uint32) error {
	var h hash.Hash
	var want string
	switch {
	case got.hasCRC:
		if crc != got.crc {
			return fmt.Errorf("%w (CRC32C %s, want %s)", errCorrupt, crcHex(crc), crcHex(got.crc))
		}
		return nil
	case got.sha != "":
		h, want = sha256.New(), got.sha
	case got.plainETag:
		h, want = md5.New(), got.etag
	default:
		return nil // nothing to check against but the size
	}
	buf := make([]byte, hashBufSize)
	r := io.NewSectionReader(f, 0, got.size)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != want {
		return fmt.Errorf("%w (%s, want %s)", errCorrupt, sum, want)
	}
	return nil
}
