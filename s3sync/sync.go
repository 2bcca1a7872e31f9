package s3sync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Options tunes one sync. The zero value syncs everything, deletes nothing.
type Options struct {
	// Exclude holds glob patterns of files to leave alone on both sides (see docs/s3.md).
	Exclude []string
	// Delete removes destination files that the source does not have.
	Delete bool
	// DryRun decides what to do and reports it through OnAction without doing it.
	DryRun bool
	// Concurrency is the number of files in flight; default 16.
	Concurrency int
	// Extract, for a source that is one archive object (.zip, .tar, .tar.gz, .tgz),
	// unpacks it into the destination directory instead of keeping the archive.
	Extract bool
	// Progress is called about twice a second and once at the end; nil = none.
	Progress func(Progress)
	// OnAction is called for each file transferred, extracted or deleted (with DryRun: for
	// each that would be). Progress and OnAction are never called at the same time.
	OnAction func(Action)
	// StateDir holds the records of past syncs; "" = $XDG_CACHE_HOME/runall/sync
	// (~/.cache/runall/sync).
	StateDir string
	// PartSize is the multipart part size, and the size from which files go multipart;
	// default 8 MiB, at least 5 MiB.
	PartSize int64
}

// Op is what an Action does.
type Op string

const (
	OpUpload   Op = "upload"
	OpDownload Op = "download"
	OpDelete   Op = "delete"
	OpExtract  Op = "extract"
)

// Action is one file transferred, extracted or deleted.
type Action struct {
	Op   Op
	Path string // local path
	URL  string // s3:// URL
	Size int64
}

const (
	defaultConcurrency = 16
	progressInterval   = 500 * time.Millisecond
)

// job is one Sync call.
type job struct {
	c        *Client
	opts     Options
	ex       *matcher
	m        *meter
	rec      *recordStore
	stateDir string
	bigSem   chan struct{} // bounds multipart transfers, which hold part buffers
	root     *os.Root      // download destination

	errMu sync.Mutex
	errs  []error
}

// pair is one file on either side. rel is the record's key.
type pair struct {
	rel    string
	path   string // local path
	key    string
	local  *stamp  // nil: no local file
	remote *object // nil: no object
	seen   time.Time
}

// Sync makes dst like src. Exactly one of them is an s3://bucket/prefix URL; the other is a
// local directory (or, as a source, a single file). See docs/s3.md for what is compared.
func (c *Client) Sync(ctx context.Context, src, dst string, opts Options) (Stats, error) {
	start := time.Now()
	srcS3, dstS3 := isS3URL(src), isS3URL(dst)
	switch {
	case srcS3 && dstS3:
		return Stats{}, fmt.Errorf("sync %s %s: both sides are s3:// URLs; one must be a local path", src, dst)
	case !srcS3 && !dstS3:
		return Stats{}, fmt.Errorf("sync %s %s: neither side is an s3:// URL", src, dst)
	case opts.Extract && !srcS3:
		return Stats{}, errors.New("extract works on downloads only: the source must be an s3:// archive object")
	}
	ex, err := newMatcher(opts.Exclude)
	if err != nil {
		return Stats{}, err
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	switch {
	case opts.PartSize == 0:
		opts.PartSize = defaultPartSize
	case opts.PartSize < minPartSize:
		return Stats{}, fmt.Errorf("part size %s is below S3's minimum of 5 MiB", FormatBytes(opts.PartSize))
	}
	j := &job{
		c:      c,
		opts:   opts,
		ex:     ex,
		m:      &meter{start: start, onProgress: opts.Progress, onAction: opts.OnAction},
		bigSem: make(chan struct{}, max(1, opts.Concurrency/4)),
	}
	j.stateDir = opts.StateDir
	if j.stateDir == "" {
		j.stateDir = defaultStateDir(c.getenv)
	}
	if abs, err := filepath.Abs(j.stateDir); err == nil {
		j.stateDir = abs
	}

	if opts.DryRun && opts.OnAction != nil {
		j.m.held = []Action{}
	}
	j.m.scanning.Store(true)
	stop, done := make(chan struct{}), make(chan struct{})
	go j.m.run(progressInterval, stop, done)
	if dstS3 {
		err = j.upload(ctx, src, dst)
	} else {
		err = j.download(ctx, src, dst)
	}
	close(stop)
	<-done
	if j.m.held != nil {
		j.m.release()
	}
	if j.root != nil {
		j.root.Close()
	}
	return j.m.stats(), err
}

// fail records a per-file error; the sync goes on with the other files.
func (j *job) fail(err error) {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	j.errs = append(j.errs, err)
}

func (j *job) err(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j.errMu.Lock()
	defer j.errMu.Unlock()
	switch len(j.errs) {
	case 0:
		return nil
	case 1:
		return j.errs[0]
	}
	return &multiError{errs: j.errs}
}

// multiError is the per-file failures of one sync; its text names the first few.
type multiError struct{ errs []error }

func (e *multiError) Error() string {
	const show = 5
	var b strings.Builder
	fmt.Fprintf(&b, "%d files failed:", len(e.errs))
	for _, err := range e.errs[:min(show, len(e.errs))] {
		b.WriteString("\n  " + err.Error())
	}
	if len(e.errs) > show {
		fmt.Fprintf(&b, "\n  and %d more", len(e.errs)-show)
	}
	return b.String()
}

func (e *multiError) Unwrap() []error { return e.errs }

// --- upload ---

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

// pairTree lists the local tree and the objects under prefix and pairs them by relative
// path. It returns the pairs whose source side exists, and the destination-only orphans.
func (j *job) pairTree(ctx context.Context, root, bucket, prefix string, up bool) (pairs, orphans []*pair, err error) {
	byRel := map[string]*pair{}
	var mu sync.Mutex
	get := func(rel string) *pair {
		p := byRel[rel]
		if p == nil {
			p = &pair{rel: rel, path: filepath.Join(root, filepath.FromSlash(rel)), key: prefix + rel}
			byRel[rel] = p
		}
		return p
	}
	seen := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		skip := j.stateDir
		err := walkLocal(root, j.ex, skip, j.c.logf, func(f localFile) {
			mu.Lock()
			defer mu.Unlock()
			p := get(f.rel)
			st := f.st
			p.local, p.seen = &st, seen
			j.m.scanned.Add(1)
		})
		if err != nil {
			return fmt.Errorf("read %s: %w", root, err)
		}
		return nil
	})
	g.Go(func() error {
		err := j.c.store.list(gctx, bucket, prefix, func(o object) error {
			rel := strings.TrimPrefix(o.key, prefix)
			if rel == "" || strings.HasSuffix(rel, "/") {
				return nil // the prefix itself, or a "directory" marker
			}
			if j.ex.excluded(rel) {
				return nil
			}
			if !up {
				if err := checkRel(o.key, rel, root); err != nil {
					return err
				}
			}
			mu.Lock()
			defer mu.Unlock()
			p := get(rel)
			p.remote = &o
			j.m.scanned.Add(1)
			return nil
		})
		if err != nil {
			return j.c.wrap(err, "list %s", location{bucket, prefix})
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for _, p := range byRel {
		src := p.local != nil
		if !up {
			src = p.remote != nil
		}
		if src {
			pairs = append(pairs, p)
		} else {
			orphans = append(orphans, p)
		}
	}
	byRelOrder := func(a, b *pair) int { return strings.Compare(a.rel, b.rel) }
	slices.SortFunc(pairs, byRelOrder)
	slices.SortFunc(orphans, byRelOrder)
	return pairs, orphans, nil
}

// --- download ---

func (j *job) download(ctx context.Context, src, dst string) error {
	loc, err := parseS3URL(src)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dst)
	if err != nil {
		return err
	}
	var single *object
	if loc.key != "" && !strings.HasSuffix(loc.key, "/") {
		obj, err := j.c.store.head(ctx, loc.bucket, loc.key)
		switch {
		case err == nil:
			single = &obj
		case !errors.Is(err, errNotFound):
			return j.c.wrap(err, "check %s", src)
		}
	}
	if j.opts.Extract && single == nil {
		return fmt.Errorf("extract: %s is not an object (a prefix cannot be extracted)", src)
	}
	if single != nil && j.opts.Delete {
		return fmt.Errorf("--delete needs a prefix source; %s is one object", src)
	}
	if single != nil {
		if err := j.openRoot(abs); err != nil {
			return err
		}
		remote := loc.String()
		j.rec = loadRecord(recordPath(j.stateDir, j.c.endpoint, abs, remote), abs, remote)
		if j.opts.Extract {
			return j.extractObject(ctx, loc.bucket, *single, abs)
		}
		rel := path.Base(single.key)
		p := &pair{rel: rel, path: filepath.Join(abs, rel), key: single.key, remote: single, seen: time.Now()}
		if fi, err := os.Stat(p.path); err == nil && fi.Mode().IsRegular() {
			st := statStamp(fi)
			p.local = &st
		}
		return j.execute(ctx, []*pair{p}, nil, loc.bucket, false)
	}

	prefix := dirPrefix(loc.key)
	remote := location{loc.bucket, prefix}.String()
	pairs, orphans, err := j.pairTree(ctx, abs, loc.bucket, prefix, false)
	if err != nil {
		return err
	}
	if len(pairs) == 0 && !strings.HasSuffix(loc.key, "/") && loc.key != "" {
		return fmt.Errorf("sync from %s: no such object or prefix (end the URL with / to sync an empty prefix)", src)
	}
	if err := j.openRoot(abs); err != nil {
		return err
	}
	j.rec = loadRecord(recordPath(j.stateDir, j.c.endpoint, abs, remote), abs, remote)
	return j.execute(ctx, pairs, orphans, loc.bucket, false)
}

// openRoot creates the destination directory and opens it as the root every download
// writes under: os.Root refuses paths that leave it, through ".." or symlinks.
func (j *job) openRoot(dir string) error {
	if j.opts.DryRun {
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
	j.root = root
	return nil
}

// --- both directions ---

// verdict is what comparing two sides tells.
type verdict int

const (
	differ  verdict = iota
	same            // in place: skip
	unknown         // needs a hash or a HEAD
)

// quick compares p's sides from the listing, stat and the record alone.
func (j *job) quick(p *pair) verdict {
	if p.local == nil || p.remote == nil || p.local.Size != p.remote.size {
		return differ
	}
	e, _ := j.rec.get(p.rel)
	if e.vouchesLocal(*p.local) && e.ETag != "" && e.ETag == p.remote.etag {
		return same // neither side changed since they were last in sync
	}
	lh, rh := e.localSHA(*p.local), e.remoteSHA(p.remote.etag)
	if rh == "" {
		rh = p.remote.sha
	}
	if lh != "" && rh != "" {
		if lh == rh {
			return same
		}
		return differ
	}
	return unknown
}

// compare settles an unknown verdict by hashing the local file and, for an object whose
// ETag is not an MD5 (multipart), reading its metadata with a HEAD request. It returns the
// local file's SHA-256 when it computed it.
func (j *job) compare(ctx context.Context, bucket string, p *pair) (bool, string, error) {
	e, _ := j.rec.get(p.rel)
	r := p.remote
	rh := e.remoteSHA(r.etag)
	if rh == "" {
		rh = r.sha
	}
	plain := isMD5Hex(r.etag)
	if rh == "" && !plain {
		o, err := j.c.store.head(ctx, bucket, p.key)
		if err != nil {
			if errors.Is(err, errNotFound) {
				return false, "", nil
			}
			return false, "", j.c.wrap(err, "check %s", location{bucket, p.key})
		}
		if o.etag != r.etag || o.sha == "" {
			return false, "", nil // changed since listed, or no hash to compare with
		}
		rh = o.sha
	}
	lh := e.localSHA(*p.local)
	if rh != "" {
		if lh == "" {
			var err error
			if lh, _, err = hashFile(p.path, p.local.Size, false); err != nil {
				return false, "", fmt.Errorf("hash %s: %w", p.path, err)
			}
		}
		return lh == rh, lh, nil
	}
	// No SHA-256 for the object, but a single-part object's ETag is its MD5.
	lh, lmd5, err := hashFile(p.path, p.local.Size, true)
	if err != nil {
		return false, "", fmt.Errorf("hash %s: %w", p.path, err)
	}
	if lmd5 == r.etag {
		return true, lh, nil
	}
	// Under SSE-KMS or SSE-C a 32-hex ETag is not the MD5: the metadata has the last word.
	if o, err := j.c.store.head(ctx, bucket, p.key); err == nil && o.etag == r.etag && o.sha != "" {
		return lh == o.sha, lh, nil
	}
	return false, lh, nil
}

// execute transfers the pairs that differ, then deletes the orphans when asked, and saves
// the record.
func (j *job) execute(ctx context.Context, pairs, orphans []*pair, bucket string, up bool) error {
	defer j.m.scanning.Store(false)
	var todo []*pair
	for _, p := range pairs {
		switch j.quick(p) {
		case same:
			j.m.skipped.Add(1)
			j.m.skippedBytes.Add(p.local.Size)
			continue
		}
		todo = append(todo, p)
		j.m.filesTotal.Add(1)
		j.m.bytesTotal.Add(j.srcSize(p, up))
	}
	j.m.scanning.Store(false)

	g := new(errgroup.Group)
	g.SetLimit(j.opts.Concurrency)
	for _, p := range todo {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := j.one(ctx, bucket, p, up); err != nil && ctx.Err() == nil {
				j.fail(err)
			}
			return nil
		})
	}
	g.Wait()

	if j.err(ctx) == nil && j.opts.Delete {
		j.deleteOrphans(ctx, bucket, orphans, up)
	}
	if !j.opts.DryRun {
		j.prune(pairs, orphans)
		if err := j.rec.save(); err != nil {
			j.c.logf("%v", err) // costs re-hashing next time, not correctness
		}
	}
	return j.err(ctx)
}

func (j *job) srcSize(p *pair, up bool) int64 {
	if up {
		return p.local.Size
	}
	return p.remote.size
}

// one brings one pair in line.
func (j *job) one(ctx context.Context, bucket string, p *pair, up bool) error {
	size := j.srcSize(p, up)
	if p.local != nil && p.remote != nil && p.local.Size == p.remote.size {
		isSame, sha, err := j.compare(ctx, bucket, p)
		if err != nil {
			return err
		}
		if isSame {
			j.m.filesTotal.Add(-1)
			j.m.bytesTotal.Add(-size)
			j.m.skipped.Add(1)
			j.m.skippedBytes.Add(size)
			if !j.opts.DryRun {
				j.rec.put(p.rel, entry{Size: p.local.Size, MTime: p.local.MTime, SHA: sha,
					ETag: p.remote.etag, Racy: isRacy(p.local.MTime, p.seen)})
			}
			return nil
		}
	}
	op := OpDownload
	if up {
		op = OpUpload
	}
	a := Action{Op: op, Path: p.path, URL: location{bucket, p.key}.String(), Size: size}
	if j.opts.DryRun {
		j.m.files.Add(1)
		j.m.bytes.Add(size)
		j.m.action(a)
		return nil
	}
	var err error
	if up {
		err = j.put(ctx, bucket, p)
	} else {
		err = j.get(ctx, bucket, p)
	}
	if err != nil {
		return err
	}
	j.m.files.Add(1)
	j.m.action(a)
	return nil
}

// counter feeds a transfer's progress into the meter and squares the count at the end.
type counter struct {
	m     *meter
	moved atomic.Int64
}

func (c *counter) add(n int64) {
	c.moved.Add(n)
	c.m.bytes.Add(n)
}

// finish makes the meter count exactly size bytes for this transfer (or none, on failure).
func (c *counter) finish(size int64, ok bool) {
	if !ok {
		size = 0
	}
	c.m.bytes.Add(size - c.moved.Load())
}

func (j *job) bigTransfer(ctx context.Context, size int64) (release func(), err error) {
	if size < j.opts.PartSize {
		return func() {}, nil
	}
	select {
	case j.bigSem <- struct{}{}:
		return func() { <-j.bigSem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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

// get downloads one object to a temp file next to its destination and renames it into
// place: the file is whole or not there at all.
func (j *job) get(ctx context.Context, bucket string, p *pair) error {
	url := location{bucket, p.key}.String()
	obj, st, err := j.fetch(ctx, bucket, *p.remote, p.rel, p.rel)
	if err != nil {
		return j.c.wrap(err, "download %s to %s", url, p.path)
	}
	j.rec.put(p.rel, entry{Size: st.Size, MTime: st.MTime, SHA: obj.sha, ETag: obj.etag})
	return nil
}

// emptySHA is the SHA-256 of no bytes.
const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// fetch downloads obj into a temp file next to rel (under the root) and renames it to
// dest; dest "" keeps the temp file and returns its name in obj.key. On any error the temp
// file is removed.
func (j *job) fetch(ctx context.Context, bucket string, obj object, rel, dest string) (object, stamp, error) {
	if dir := path.Dir(rel); dir != "." {
		if err := j.root.MkdirAll(dir, 0o755); err != nil {
			return object{}, stamp{}, err
		}
	}
	tmp := tempName(rel)
	f, err := j.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return object{}, stamp{}, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			j.root.Remove(tmp)
		}
	}()
	got := object{key: obj.key, etag: obj.etag, sha: emptySHA}
	if obj.size > 0 {
		release, err := j.bigTransfer(ctx, obj.size)
		if err != nil {
			return object{}, stamp{}, err
		}
		cnt := &counter{m: j.m}
		got, err = j.c.store.download(ctx, transfer{
			bucket: bucket, key: obj.key, size: obj.size, partSize: j.opts.PartSize, progress: cnt.add,
		}, f)
		release()
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
	if err := j.root.Rename(tmp, dest); err != nil {
		return object{}, stamp{}, err
	}
	ok = true
	return got, statStamp(fi), nil
}

// deleteOrphans removes destination files that the source lacks.
func (j *job) deleteOrphans(ctx context.Context, bucket string, orphans []*pair, up bool) {
	if len(orphans) == 0 {
		return
	}
	for _, p := range orphans {
		if j.opts.DryRun {
			j.m.deleted.Add(1)
			j.m.action(j.deleteAction(bucket, p, up))
		}
	}
	if j.opts.DryRun {
		return
	}
	if up {
		keys := make([]string, len(orphans))
		for i, p := range orphans {
			keys[i] = p.key
		}
		if err := j.c.store.remove(ctx, bucket, keys); err != nil {
			j.fail(j.c.wrap(err, "delete under s3://%s", bucket))
			return
		}
		for _, p := range orphans {
			j.m.deleted.Add(1)
			j.rec.drop(p.rel)
			j.m.action(j.deleteAction(bucket, p, up))
		}
		return
	}
	for _, p := range orphans {
		if err := j.root.Remove(p.rel); err != nil {
			j.fail(fmt.Errorf("delete %s: %w", p.path, err))
			continue
		}
		j.m.deleted.Add(1)
		j.rec.drop(p.rel)
		j.m.action(j.deleteAction(bucket, p, up))
	}
}

func (j *job) deleteAction(bucket string, p *pair, up bool) Action {
	a := Action{Op: OpDelete, Path: p.path, URL: location{bucket, p.key}.String()}
	if up {
		a.Path, a.Size = "", p.remote.size
	} else {
		a.URL, a.Size = "", p.local.Size
	}
	return a
}

// prune drops record entries for files that are on neither side any more.
func (j *job) prune(pairs, orphans []*pair) {
	keep := make(map[string]bool, len(pairs)+len(orphans))
	for _, p := range pairs {
		keep[p.rel] = true
	}
	for _, p := range orphans {
		keep[p.rel] = true
	}
	j.rec.mu.Lock()
	defer j.rec.mu.Unlock()
	for rel := range j.rec.rec.Files {
		if !keep[rel] {
			delete(j.rec.rec.Files, rel)
		}
	}
}

// extractObject downloads one archive object and unpacks it into dir, unless the record
// shows this very archive already unpacked there with its files untouched.
func (j *job) extractObject(ctx context.Context, bucket string, obj object, dir string) error {
	url := location{bucket, obj.key}.String()
	if a := j.rec.archive(); a != nil && a.Key == obj.key && a.ETag == obj.etag && a.Size == obj.size && j.intact(a.Files) {
		j.m.skipped.Add(1)
		j.m.skippedBytes.Add(obj.size)
		return nil
	}
	act := Action{Op: OpExtract, Path: dir, URL: url, Size: obj.size}
	j.m.scanning.Store(false)
	j.m.filesTotal.Add(1)
	j.m.bytesTotal.Add(obj.size)
	if j.opts.DryRun {
		j.m.files.Add(1)
		j.m.bytes.Add(obj.size)
		j.m.action(act)
		return nil
	}
	got, _, err := j.fetch(ctx, bucket, obj, path.Base(obj.key), "")
	if err != nil {
		return j.c.wrap(err, "download %s", url)
	}
	defer j.root.Remove(got.key)
	files, err := extractFile(ctx, filepath.Join(dir, got.key), path.Base(obj.key), dir, j.ex)
	if err != nil {
		return fmt.Errorf("extract %s: %w", url, err)
	}
	j.rec.setArchive(&archiveEntry{Key: obj.key, ETag: got.etag, Size: obj.size, Files: files})
	j.rec.rec.Files = map[string]entry{}
	if err := j.rec.save(); err != nil {
		j.c.logf("%v", err)
	}
	j.m.files.Add(1)
	j.m.action(act)
	return nil
}

// intact reports whether the files an archive made are all still there, unchanged.
func (j *job) intact(files map[string]stamp) bool {
	if j.root == nil {
		return false
	}
	for rel, st := range files {
		fi, err := j.root.Lstat(rel)
		if err != nil || !fi.Mode().IsRegular() || statStamp(fi) != st {
			return false
		}
	}
	return true
}
