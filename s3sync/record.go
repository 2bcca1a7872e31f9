package s3sync

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/runall/runall/internal/owned"
)

// The record of the last sync between one local directory and one S3 prefix. Each entry is
// a fact that stays true: "the local file with this size and mtime had the same content as
// the object with this ETag (and that content's SHA-256 or CRC32C was h)". A later sync
// trusts a fact only as far as both its sides still match, so a stale or lost record costs
// a re-hash, never a wrong skip.
type record struct {
	Version int              `json:"version"`
	Local   string           `json:"local"`
	Remote  string           `json:"remote"`
	Files   map[string]entry `json:"files"`
	Archive *archiveEntry    `json:"archive,omitempty"`
	// Uploads are multipart uploads begun and not yet completed or aborted.
	Uploads []openUpload `json:"uploads,omitempty"`
}

// openUpload is a multipart upload in progress, recorded (and saved) before its first part
// is sent, so that a sync killed mid-upload leaves the next one a way to abort it.
type openUpload struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	ID     string `json:"id"`
}

// entry is the record of one file: its local stamp, the object's ETag and, when known, the
// content's SHA-256 and CRC32C (hex).
type entry struct {
	Size  int64  `json:"s"`
	MTime int64  `json:"m"` // nanoseconds since the epoch
	ETag  string `json:"e"`
	SHA   string `json:"h,omitempty"`
	CRC   string `json:"c,omitempty"`
	// Racy marks a stamp taken so soon after the file's mtime that a later write within the
	// file system's timestamp granularity could leave size and mtime unchanged; such a file
	// is hashed again next time (git's "racily clean" problem).
	Racy bool `json:"r,omitempty"`
}

// archiveEntry records an archive extracted into the directory, and the files it made.
type archiveEntry struct {
	Key   string           `json:"key"`
	ETag  string           `json:"etag"`
	Size  int64            `json:"size"`
	Files map[string]stamp `json:"files"`
}

// stamp is what stat tells cheaply about a local file.
type stamp struct {
	Size  int64 `json:"s"`
	MTime int64 `json:"m"`
}

const recordVersion = 1

// racyWindow is wider than any timestamp granularity runall expects (Linux file systems:
// a clock tick; FAT: 2 s).
const racyWindow = 2 * time.Second

// vouchesLocal reports whether the local file with stamp st is the one the entry saw.
func (e entry) vouchesLocal(st stamp) bool {
	return !e.Racy && e.Size == st.Size && e.MTime == st.MTime
}

// local is what the entry knows of the content of the local file with stamp st.
func (e entry) local(st stamp) ident {
	if !e.vouchesLocal(st) {
		return ident{}
	}
	return ident{sha: e.SHA, crc: e.CRC}
}

// remote is what the entry knows of the content of an object with this ETag.
func (e entry) remote(etag string) ident {
	if e.ETag == "" || e.ETag != etag {
		return ident{}
	}
	return ident{sha: e.SHA, crc: e.CRC}
}

// isRacy reports whether a stamp taken at seen may miss a same-size write in the same
// timestamp tick.
func isRacy(mtime int64, seen time.Time) bool {
	return seen.UnixNano()-mtime < int64(racyWindow)
}

// recordStore loads and saves records, and collects the entries of a sync in progress.
type recordStore struct {
	path   string
	mu     sync.Mutex
	rec    *record
	saveMu sync.Mutex // one save at a time, so that a later state is never overwritten by an earlier one
}

// recordPath names the record of the pair (endpoint, local, remote) under dir.
func recordPath(dir, endpoint, local, remote string) string {
	h := sha256.Sum256([]byte(endpoint + "\n" + local + "\n" + remote))
	return filepath.Join(dir, hex.EncodeToString(h[:12])+".json")
}

// defaultStateDir is $XDG_CACHE_HOME/runall/sync, else ~/.cache/runall/sync, else a
// directory under the system temp dir.
func defaultStateDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "runall", "sync")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "runall", "sync")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("runall-sync-%d", os.Getuid()))
}

// loadRecord reads the record at path; a missing or unreadable one is an empty record
// (costing re-hashes, not correctness).
func loadRecord(path, local, remote string) *recordStore {
	rs := &recordStore{path: path}
	rec := &record{}
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, rec) == nil &&
		rec.Version == recordVersion && rec.Local == local && rec.Remote == remote {
		rs.rec = rec
	} else {
		rs.rec = &record{}
	}
	rs.rec.Version, rs.rec.Local, rs.rec.Remote = recordVersion, local, remote
	if rs.rec.Files == nil {
		rs.rec.Files = map[string]entry{}
	}
	return rs
}

func (rs *recordStore) get(rel string) (entry, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	e, ok := rs.rec.Files[rel]
	return e, ok
}

func (rs *recordStore) put(rel string, e entry) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.rec.Files[rel] = e
}

func (rs *recordStore) drop(rel string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.rec.Files, rel)
}

func (rs *recordStore) archive() *archiveEntry {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.rec.Archive
}

func (rs *recordStore) setArchive(a *archiveEntry) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.rec.Archive = a
}

// trackUpload records a multipart upload begun (open) or ended, and saves the record at
// once: the upload must be known even if this process is killed the next moment.
func (rs *recordStore) trackUpload(bucket, key, id string, open bool) {
	rs.mu.Lock()
	rs.rec.Uploads = slices.DeleteFunc(rs.rec.Uploads, func(u openUpload) bool { return u.ID == id })
	if open {
		rs.rec.Uploads = append(rs.rec.Uploads, openUpload{Bucket: bucket, Key: key, ID: id})
	}
	rs.mu.Unlock()
	rs.save() // a failure costs an orphan upload, not correctness; the final save reports it
}

func (rs *recordStore) openUploads() []openUpload {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.rec.Uploads)
}

// save writes the record atomically (temp file and rename).
func (rs *recordStore) save() error {
	rs.saveMu.Lock()
	defer rs.saveMu.Unlock()
	rs.mu.Lock()
	b, err := json.Marshal(rs.rec)
	rs.mu.Unlock()
	if err != nil {
		return err
	}
	dir, err := owned.Open(filepath.Dir(rs.path))
	if err == nil {
		// 0600, as the temporary file it was written through had.
		err = dir.WriteFile(filepath.Base(rs.path), b, 0o600)
		dir.Close()
	}
	if err != nil {
		return fmt.Errorf("save sync record: %w", err)
	}
	return nil
}

// statStamp returns the stamp of fi.
func statStamp(fi fs.FileInfo) stamp {
	return stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}
