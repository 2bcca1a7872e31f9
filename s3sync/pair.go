package s3sync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Pairing the two sides of a sync by relative path, and comparing them, in either direction.

// pair is one file on either side. rel is the record's key.
type pair struct {
	rel    string
	path   string // local path
	key    string
	local  *stamp  // nil: no local file
	remote *object // nil: no object
	seen   time.Time
}

// pairTree lists the local tree and the objects under prefix and pairs them by relative
// path. It returns the pairs whose source side exists, and the destination-only orphans.
func (j *job) pairTree(ctx context.Context, root, bucket, prefix string, up bool) (pairs, orphans []*pair, err error) {
	ps := &pairing{root: root, prefix: prefix, seen: time.Now(), byRel: map[string]*pair{}}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := walkLocal(root, j.ex, j.stateDir, !j.opts.SkipLinks, j.c.logf, func(f localFile) {
			st := f.st
			ps.local(f.rel, &st)
			j.m.n.scanned.Add(1)
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
			ps.remote(rel, &o)
			j.m.n.scanned.Add(1)
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
	pairs, orphans = ps.split(up)
	return pairs, orphans, nil
}

// pairing gathers the two sides' listings, read at once, by relative path.
type pairing struct {
	root, prefix string
	seen         time.Time // when the local tree was read

	mu    sync.Mutex
	byRel map[string]*pair
}

// get is rel's pair, made when it has none; ps.mu is held.
func (ps *pairing) get(rel string) *pair {
	p := ps.byRel[rel]
	if p == nil {
		p = &pair{rel: rel, path: filepath.Join(ps.root, filepath.FromSlash(rel)), key: ps.prefix + rel}
		ps.byRel[rel] = p
	}
	return p
}

// local records the local file at rel.
func (ps *pairing) local(rel string, st *stamp) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.get(rel)
	p.local, p.seen = st, ps.seen
}

// remote records the object at rel.
func (ps *pairing) remote(rel string, o *object) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.get(rel).remote = o
}

// split is the pairs whose source side exists (local going up, remote going down) and
// the orphans, each by relative path.
func (ps *pairing) split(up bool) (pairs, orphans []*pair) {
	for _, p := range ps.byRel {
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
	return pairs, orphans
}

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
	l, r := e.local(*p.local), e.remote(p.remote.etag).or(p.remote.ident())
	if l.sha != "" && r.sha != "" {
		return verdictOf(l.sha == r.sha)
	}
	if r.sha == "" && l.crc != "" && r.crc != "" { // no SHA-256 on the object: its CRC32C decides
		return verdictOf(l.crc == r.crc)
	}
	return unknown
}

func verdictOf(equal bool) verdict {
	if equal {
		return same
	}
	return differ
}

// ident is what is known of a content's identity: its hex SHA-256 and CRC32C, each "" when
// unknown.
type ident struct{ sha, crc string }

// or fills what id does not know from other.
func (id ident) or(other ident) ident {
	if id.sha == "" {
		id.sha = other.sha
	}
	if id.crc == "" {
		id.crc = other.crc
	}
	return id
}

// ident is what the object's metadata says of its content.
func (o object) ident() ident {
	id := ident{sha: o.sha}
	if o.hasCRC {
		id.crc = crcHex(o.crc)
	}
	return id
}

// compare settles an unknown verdict by hashing the local file and, for an object whose
// ETag is not an MD5 (multipart), reading its metadata with a HEAD request. It returns what
// it learnt of the local file's identity.
//
// Objects that runall uploaded from disk carry a CRC32C and no SHA-256 (see sumFile): for
// them equal sizes and equal CRC32Cs make the files the same. A 32-bit CRC lets a changed
// file of the same size pass as unchanged once in 4 billion comparisons; only files whose
// record is lost or stale and whose size did not change get that far.
func (j *job) compare(ctx context.Context, bucket string, p *pair) (bool, ident, error) {
	e, _ := j.rec.get(p.rel)
	r := p.remote
	rid := e.remote(r.etag).or(r.ident())
	if rid == (ident{}) && !isMD5Hex(r.etag) {
		o, err := j.c.store.head(ctx, bucket, p.key)
		if err != nil {
			if errors.Is(err, errNotFound) {
				return false, ident{}, nil
			}
			return false, ident{}, j.c.wrap(err, "check %s", location{bucket, p.key})
		}
		if o.etag != r.etag {
			return false, ident{}, nil // changed since listed
		}
		if rid = o.ident(); rid == (ident{}) {
			return false, ident{}, nil // no hash to compare with
		}
	}
	local := e.local(*p.local)
	if rid.sha != "" {
		lh := local.sha
		if lh == "" {
			var err error
			if lh, _, err = hashFile(p.path, p.local.Size, false); err != nil {
				return false, ident{}, fmt.Errorf("hash %s: %w", p.path, err)
			}
		}
		return lh == rid.sha, ident{sha: lh}, nil
	}
	if rid.crc != "" {
		lc := local.crc
		if lc == "" {
			c, err := crcFile(ctx, p.path, p.local.Size)
			if err != nil {
				return false, ident{}, fmt.Errorf("hash %s: %w", p.path, err)
			}
			lc = crcHex(c)
		}
		return lc == rid.crc, ident{crc: lc}, nil
	}
	// No hash for the object, but a single-part object's ETag is its MD5.
	lh, lmd5, err := hashFile(p.path, p.local.Size, true)
	if err != nil {
		return false, ident{}, fmt.Errorf("hash %s: %w", p.path, err)
	}
	if lmd5 == r.etag {
		return true, ident{sha: lh}, nil
	}
	// Under SSE-KMS or SSE-C a 32-hex ETag is not the MD5: the metadata has the last word.
	if o, err := j.c.store.head(ctx, bucket, p.key); err == nil && o.etag == r.etag && o.sha != "" {
		return lh == o.sha, ident{sha: lh}, nil
	}
	return false, ident{sha: lh}, nil
}
