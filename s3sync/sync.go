package s3sync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/runall/runall/internal/pathname"
)

// Options tunes one sync. The zero value syncs everything, deletes nothing.
type Options struct {
	// Exclude holds glob patterns of files to leave alone on both sides (see docs/s3.md).
	Exclude []string
	// Delete removes destination files that the source does not have; never into a whole
	// bucket (unless WholeBucket), a filesystem's root, or a URL with an empty segment
	// (ErrDeleteGuard).
	Delete bool
	// WholeBucket allows Delete to an s3:// URL with no prefix.
	WholeBucket bool
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
	// SkipLinks leaves symlinks out of an upload, instead of sending the files they point
	// to: a checkpoint keeps its links in its manifest, and never a file outside it.
	SkipLinks bool
	// PartSize is the multipart part size (and ranged-download size), and the size from
	// which files go multipart; at least 5 MiB. 0: files from 8 MiB go multipart, in parts
	// sized for throughput (8 to 64 MiB, more for files past S3's 10,000 parts).
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
	root     *os.Root // download destination

	errMu sync.Mutex
	errs  []error
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
	if err := checkDelete(src, dst, opts); err != nil {
		return Stats{}, err
	}
	ex, err := newMatcher(opts.Exclude)
	if err != nil {
		return Stats{}, err
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	if opts.PartSize != 0 && opts.PartSize < minPartSize {
		return Stats{}, fmt.Errorf("part size %s is below S3's minimum of 5 MiB", FormatBytes(opts.PartSize))
	}
	j := &job{
		c:    c,
		opts: opts,
		ex:   ex,
		m:    &meter{start: start, onProgress: opts.Progress, onAction: opts.OnAction},
	}
	j.stateDir = opts.StateDir
	if j.stateDir == "" {
		j.stateDir = defaultStateDir(c.getenv)
	}
	if abs, err := filepath.Abs(pathname.Clean(j.stateDir)); err == nil {
		j.stateDir = abs
	}

	if opts.DryRun && opts.OnAction != nil {
		j.m.held = []Action{}
	}
	j.m.n.scanning.Store(true)
	stop, done := make(chan struct{}), make(chan struct{})
	go j.m.run(progressInterval, stop, done)
	if dstS3 {
		err = uploader{j}.upload(ctx, src, dst)
	} else {
		err = downloader{j}.download(ctx, src, dst)
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

// execute transfers the pairs that differ, then deletes the orphans when asked, and saves
// the record.
func (j *job) execute(ctx context.Context, pairs, orphans []*pair, bucket string, up bool) error {
	defer j.m.n.scanning.Store(false)
	var todo []*pair
	for _, p := range pairs {
		switch j.quick(p) {
		case same:
			j.m.n.skipped.Add(1)
			j.m.n.skippedBytes.Add(p.local.Size)
			continue
		}
		todo = append(todo, p)
		j.m.n.filesTotal.Add(1)
		j.m.n.bytesTotal.Add(j.srcSize(p, up))
	}
	j.m.n.scanning.Store(false)

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
		isSame, id, err := j.compare(ctx, bucket, p)
		if err != nil {
			return err
		}
		if isSame {
			j.m.n.filesTotal.Add(-1)
			j.m.n.bytesTotal.Add(-size)
			j.m.n.skipped.Add(1)
			j.m.n.skippedBytes.Add(size)
			if !j.opts.DryRun {
				j.rec.put(p.rel, entry{Size: p.local.Size, MTime: p.local.MTime, SHA: id.sha, CRC: id.crc,
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
		j.m.n.files.Add(1)
		j.m.n.bytes.Add(size)
		j.m.action(a)
		return nil
	}
	var err error
	if up {
		err = uploader{j}.put(ctx, bucket, p)
	} else {
		err = downloader{j}.get(ctx, bucket, p)
	}
	if err != nil {
		return err
	}
	j.m.n.files.Add(1)
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
	c.m.n.bytes.Add(n)
}

// finish makes the meter count exactly size bytes for this transfer (or none, on failure).
func (c *counter) finish(size int64, ok bool) {
	if !ok {
		size = 0
	}
	c.m.n.bytes.Add(size - c.moved.Load())
}

// partSize is the part size for a transfer of size bytes, 0 for a single request.
func (j *job) partSize(size int64) int64 {
	switch {
	case j.opts.PartSize == 0 && size >= defaultPartSize:
		return autoPartSize(size)
	case j.opts.PartSize > 0 && size >= j.opts.PartSize:
		return fixPartSize(size, j.opts.PartSize)
	}
	return 0
}
