package s3sync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// writeTree writes files (slash paths relative to dir) and dates them an hour ago, so that
// the record does not treat them as racily clean.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns every file under dir, runall's temp files included.
func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			files[filepath.ToSlash(rel)] = "-> " + target
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func memObjects(st *memStore, bucket string) map[string]string {
	m := map[string]string{}
	for _, k := range st.keys(bucket) {
		o, _ := st.get(bucket, k)
		m[k] = string(o.data)
	}
	return m
}

func mustSync(t testing.TB, c *Client, src, dst string, opts Options) Stats {
	t.Helper()
	st, err := c.Sync(context.Background(), src, dst, opts)
	if err != nil {
		t.Fatalf("sync %s %s: %v", src, dst, err)
	}
	return st
}

var sampleTree = map[string]string{
	"a.txt":          "alpha",
	"sub/b.bin":      strings.Repeat("b", 1000),
	"sub/deep/c.txt": "",
}

func TestMemRoundTrip(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir()}
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, sampleTree)

	got := mustSync(t, c, src, "s3://b/p", opts)
	if got.Files != 3 || got.Bytes != 1005 || got.SkippedFiles != 0 {
		t.Errorf("upload stats = %+v, want 3 files, 1005 bytes", got)
	}
	want := map[string]string{"p/a.txt": "alpha", "p/sub/b.bin": sampleTree["sub/b.bin"], "p/sub/deep/c.txt": ""}
	if objs := memObjects(st, "b"); !reflect.DeepEqual(objs, want) {
		t.Errorf("objects = %v, want %v", objs, want)
	}
	if o, _ := st.get("b", "p/a.txt"); o.meta[metaSHA256] != sha256Hex([]byte("alpha")) {
		t.Errorf("metadata = %v, want the content SHA-256", o.meta)
	}

	got = mustSync(t, c, "s3://b/p/", dst, opts)
	if got.Files != 3 || got.Bytes != 1005 {
		t.Errorf("download stats = %+v, want 3 files, 1005 bytes", got)
	}
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, sampleTree) {
		t.Errorf("downloaded tree = %v, want %v", tree, sampleTree)
	}
}

func TestMemNoOpResyncReadsOnlyTheListing(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir()}
	src, dst := t.TempDir(), t.TempDir()
	writeTree(t, src, sampleTree)
	mustSync(t, c, src, "s3://b/p/", opts)
	mustSync(t, c, "s3://b/p/", dst, opts)
	// Date the downloads as old files too: the record must vouch for them by stamp.
	old := time.Now().Add(-time.Hour)
	for name := range sampleTree {
		os.Chtimes(filepath.Join(dst, name), old, old)
	}
	mustSync(t, c, "s3://b/p/", dst, opts) // records the new stamps

	uploads, downloads, heads := st.uploads.Load(), st.downloads.Load(), st.heads.Load()
	up := mustSync(t, c, src, "s3://b/p/", opts)
	down := mustSync(t, c, "s3://b/p/", dst, opts)
	for _, s := range []Stats{up, down} {
		if s.Files != 0 || s.SkippedFiles != 3 || s.SkippedBytes != 1005 {
			t.Errorf("re-sync stats = %+v, want 0 transferred, 3 skipped", s)
		}
	}
	if n := st.uploads.Load() - uploads; n != 0 {
		t.Errorf("re-sync made %d uploads", n)
	}
	if n := st.downloads.Load() - downloads; n != 0 {
		t.Errorf("re-sync made %d downloads", n)
	}
	if n := st.heads.Load() - heads; n != 0 {
		t.Errorf("re-sync made %d HEAD requests, want 0", n)
	}
}

func TestMemSameSizeChangeIsUploaded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		touch   func(p string) // after rewriting with same-size content
		partial bool
	}{
		{name: "new mtime", touch: func(p string) {
			later := time.Now().Add(-time.Minute)
			os.Chtimes(p, later, later)
		}},
		// Same size and same mtime: only the racy-clean rule catches this, because the
		// first sync saw the file right after it was written.
		{name: "same mtime, racy", touch: func(string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, st := newMemClient(t)
			opts := Options{StateDir: t.TempDir()}
			src := t.TempDir()
			p := filepath.Join(src, "f.txt")
			if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(p)
			if tc.name != "same mtime, racy" {
				writeTree(t, src, map[string]string{"f.txt": "one"})
				fi, _ = os.Stat(p)
			}
			mustSync(t, c, src, "s3://b/", opts)
			os.WriteFile(p, []byte("two"), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
			tc.touch(p)
			got := mustSync(t, c, src, "s3://b/", opts)
			if got.Files != 1 {
				t.Errorf("stats = %+v, want 1 file uploaded", got)
			}
			if o, _ := st.get("b", "f.txt"); string(o.data) != "two" {
				t.Errorf("object = %q, want %q", o.data, "two")
			}
		})
	}
}

func TestMemSameSizeChangeIsDownloaded(t *testing.T) {
	for _, partSize := range []int64{0, 4} { // single-part, and multipart without metadata
		t.Run(fmt.Sprint("part size ", partSize), func(t *testing.T) {
			c, st := newMemClient(t)
			opts := Options{StateDir: t.TempDir()}
			dst := t.TempDir()
			st.putRaw("b", "p/f.txt", []byte("one1"), partSize)
			mustSync(t, c, "s3://b/p/", dst, opts)
			st.putRaw("b", "p/f.txt", []byte("two2"), partSize)
			got := mustSync(t, c, "s3://b/p/", dst, opts)
			if got.Files != 1 {
				t.Errorf("stats = %+v, want 1 file downloaded", got)
			}
			if b, _ := os.ReadFile(filepath.Join(dst, "f.txt")); string(b) != "two2" {
				t.Errorf("file = %q, want %q", b, "two2")
			}
		})
	}
}

func TestMemUnrecordedIdenticalFileIsSkipped(t *testing.T) {
	c, st := newMemClient(t)
	dst := t.TempDir()
	writeTree(t, dst, map[string]string{"single.txt": "same", "multi.bin": "0123456789"})
	st.putRaw("b", "single.txt", []byte("same"), 0)
	// A multipart object uploaded by runall: its ETag is no MD5, its metadata has one.
	data := []byte("0123456789")
	sm, err := sumFile(context.Background(), bytes.NewReader(data), 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.store.upload(context.Background(), transfer{bucket: "b", key: "multi.bin", size: 10, sums: sm, partSize: 4},
		bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	got := mustSync(t, c, "s3://b/", dst, Options{StateDir: t.TempDir()})
	if got.Files != 0 || got.SkippedFiles != 2 {
		t.Errorf("stats = %+v, want both skipped after hashing", got)
	}
	if n := st.heads.Load(); n != 1 {
		t.Errorf("%d HEAD requests, want 1 (the multipart object)", n)
	}
}

func TestMemDeleteOnlyWhenAsked(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir()}
	src := t.TempDir()
	writeTree(t, src, map[string]string{"keep": "k"})
	st.putRaw("b", "p/orphan", []byte("o"), 0)

	mustSync(t, c, src, "s3://b/p/", opts)
	if _, ok := st.get("b", "p/orphan"); !ok {
		t.Fatal("orphan object deleted without Delete")
	}
	opts.Delete = true
	if got := mustSync(t, c, src, "s3://b/p/", opts); got.Deleted != 1 {
		t.Errorf("stats = %+v, want 1 deleted", got)
	}
	if keys := st.keys("b"); !reflect.DeepEqual(keys, []string{"p/keep"}) {
		t.Errorf("keys = %v, want [p/keep]", keys)
	}

	dst := t.TempDir()
	writeTree(t, dst, map[string]string{"local-only": "x"})
	opts.Delete = false
	mustSync(t, c, "s3://b/p/", dst, opts)
	if _, err := os.Stat(filepath.Join(dst, "local-only")); err != nil {
		t.Fatal("local file deleted without Delete")
	}
	opts.Delete = true
	mustSync(t, c, "s3://b/p/", dst, opts)
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, map[string]string{"keep": "k"}) {
		t.Errorf("tree = %v, want only keep", tree)
	}
}

func TestMemExclude(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir(), Exclude: []string{"*.tmp", "cache", "logs/**/*.txt"}, Delete: true, WholeBucket: true}
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"model.pt": "m", "x.tmp": "t", "sub/y.tmp": "t", "cache/z": "c", "logs/a/b/c.txt": "l", "logs/keep.json": "k",
	})
	st.putRaw("b", "cache/remote-only", []byte("r"), 0) // excluded: not deleted either
	mustSync(t, c, src, "s3://b/", opts)
	want := []string{"cache/remote-only", "logs/keep.json", "model.pt"}
	if keys := st.keys("b"); !reflect.DeepEqual(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}

	dst := t.TempDir()
	st.putRaw("b", "junk.tmp", []byte("j"), 0)
	mustSync(t, c, "s3://b/", dst, opts)
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, map[string]string{"logs/keep.json": "k", "model.pt": "m"}) {
		t.Errorf("tree = %v", tree)
	}
}

func TestMemEscapingKeysAreRefused(t *testing.T) {
	for _, key := range []string{"p/../evil", "p//abs", "p/a/./b"} {
		t.Run(key, func(t *testing.T) {
			c, st := newMemClient(t)
			st.putRaw("b", "p/fine", []byte("f"), 0)
			st.putRaw("b", key, []byte("x"), 0)
			parent := t.TempDir()
			dst := filepath.Join(parent, "dst")
			_, err := c.Sync(context.Background(), "s3://b/p/", dst, Options{StateDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
				t.Fatalf("err = %v, want a refusal naming %q", err, key)
			}
			if tree := readTree(t, parent); len(tree) != 0 {
				t.Errorf("files written: %v", tree)
			}
		})
	}
}

func TestMemFailedDownloadLeavesNoTempFile(t *testing.T) {
	c, st := newMemClient(t)
	for i := range 5 {
		st.putRaw("b", fmt.Sprintf("f%d", i), []byte("content"), 0)
	}
	st.failDownload = func(key string) error {
		if key == "f3" {
			return errors.New("connection reset by peer")
		}
		return nil
	}
	dst := t.TempDir()
	_, err := c.Sync(context.Background(), "s3://b/", dst, Options{StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "f3") {
		t.Fatalf("err = %v, want a failure naming f3", err)
	}
	tree := readTree(t, dst)
	if _, ok := tree["f3"]; ok || len(tree) != 4 {
		t.Errorf("tree = %v, want the 4 other files and no temp file", tree)
	}
}

func TestMemCancelLeavesNoTornFile(t *testing.T) {
	c, st := newMemClient(t)
	for i := range 50 {
		st.putRaw("b", fmt.Sprintf("f%02d", i), []byte(strings.Repeat("x", 100)), 0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.failDownload = func(key string) error {
		if key == "f10" {
			cancel()
		}
		return nil
	}
	dst := t.TempDir()
	_, err := c.Sync(ctx, "s3://b/", dst, Options{StateDir: t.TempDir(), Concurrency: 4})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	for name, body := range readTree(t, dst) {
		if strings.Contains(name, tempMarker) || len(body) != 100 {
			t.Errorf("torn or temp file left: %s (%d bytes)", name, len(body))
		}
	}
}

func TestMemDryRun(t *testing.T) {
	c, st := newMemClient(t)
	state := t.TempDir()
	src := t.TempDir()
	writeTree(t, src, map[string]string{"new": "n"})
	st.putRaw("b", "gone", []byte("g"), 0)
	var actions []string
	got := mustSync(t, c, src, "s3://b/", Options{StateDir: state, DryRun: true, Delete: true, WholeBucket: true, OnAction: func(a Action) {
		actions = append(actions, fmt.Sprintf("%s %s", a.Op, a.URL))
	}})
	sort.Strings(actions)
	want := []string{"delete s3://b/gone", "upload s3://b/new"}
	if !reflect.DeepEqual(actions, want) {
		t.Errorf("actions = %v, want %v", actions, want)
	}
	if got.Files != 1 || got.Deleted != 1 {
		t.Errorf("stats = %+v", got)
	}
	if keys := st.keys("b"); !reflect.DeepEqual(keys, []string{"gone"}) || st.uploads.Load() != 0 {
		t.Errorf("dry run changed the bucket: %v", keys)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("dry run wrote a record")
	}
}

func TestMemSingleFile(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir()}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"model.pt": "weights"})
	p := filepath.Join(dir, "model.pt")
	mustSync(t, c, p, "s3://b/runs/", opts)
	mustSync(t, c, p, "s3://b/final.pt", opts)
	if keys := st.keys("b"); !reflect.DeepEqual(keys, []string{"final.pt", "runs/model.pt"}) {
		t.Errorf("keys = %v", keys)
	}
	if got := mustSync(t, c, p, "s3://b/final.pt", opts); got.Files != 0 || got.SkippedFiles != 1 {
		t.Errorf("re-sync stats = %+v, want skipped", got)
	}

	dst := t.TempDir()
	mustSync(t, c, "s3://b/final.pt", dst, opts)
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, map[string]string{"final.pt": "weights"}) {
		t.Errorf("tree = %v", tree)
	}
	if _, err := c.Sync(context.Background(), p, "s3://b/x", Options{StateDir: t.TempDir(), Delete: true}); err == nil {
		t.Error("--delete with a file source: no error")
	}
}

func TestMemMissingSource(t *testing.T) {
	c, _ := newMemClient(t)
	dst := t.TempDir()
	if _, err := c.Sync(context.Background(), "s3://b/nothing", dst, Options{StateDir: t.TempDir()}); err == nil ||
		!strings.Contains(err.Error(), "no such object or prefix") {
		t.Errorf("err = %v, want no such object or prefix", err)
	}
	if _, err := c.Sync(context.Background(), "s3://b/nothing/", dst, Options{StateDir: t.TempDir()}); err != nil {
		t.Errorf("empty prefix with a slash: %v", err)
	}
}

func TestMemExtractKeepsRecord(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir(), Extract: true}
	st.putRaw("b", "data/set.tar.gz", tarGz(t, []tarEntry{{name: "d/x.txt", body: "x"}, {name: "y.txt", body: "y"}}), 0)
	dst := t.TempDir()
	mustSync(t, c, "s3://b/data/set.tar.gz", dst, opts)
	want := map[string]string{"d/x.txt": "x", "y.txt": "y"}
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, want) {
		t.Errorf("tree = %v, want %v", tree, want)
	}
	got := mustSync(t, c, "s3://b/data/set.tar.gz", dst, opts)
	if got.Files != 0 || got.SkippedFiles != 1 || st.downloads.Load() != 1 {
		t.Errorf("re-sync stats = %+v, %d downloads; want skipped", got, st.downloads.Load())
	}
	os.Remove(filepath.Join(dst, "y.txt"))
	if got := mustSync(t, c, "s3://b/data/set.tar.gz", dst, opts); got.Files != 1 {
		t.Errorf("after removing an extracted file: stats = %+v, want extracted again", got)
	}
	if tree := readTree(t, dst); !reflect.DeepEqual(tree, want) {
		t.Errorf("tree = %v, want %v", tree, want)
	}
}

func TestMemProgress(t *testing.T) {
	c, _ := newMemClient(t)
	src := t.TempDir()
	writeTree(t, src, sampleTree)
	var last Progress
	calls := 0
	mustSync(t, c, src, "s3://b/", Options{StateDir: t.TempDir(), Progress: func(p Progress) { last = p; calls++ }})
	if !last.Done || last.Files != 3 || last.FilesTotal != 3 || last.Bytes != 1005 || last.BytesTotal != 1005 {
		t.Errorf("last progress = %+v (of %d calls)", last, calls)
	}
}

func TestMemMultipartChecksumsAndChangeDuringUpload(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir(), PartSize: minPartSize}
	src := t.TempDir()
	big := strings.Repeat("0123456789abcdef", (minPartSize*2+1000)/16)
	writeTree(t, src, map[string]string{"big.bin": big})
	if got := mustSync(t, c, src, "s3://b/", opts); got.Files != 1 {
		t.Fatalf("stats = %+v", got)
	}
	o, _ := st.get("b", "big.bin")
	if !strings.HasSuffix(o.etag, "-3") || o.meta[metaCRC32C] != crcHex(crc32.Checksum([]byte(big), castagnoli())) {
		t.Errorf("etag %s, metadata %v: want 3 parts and the content's CRC32C", o.etag, o.meta)
	}

	// The file is rewritten (same size) between checksumming and sending: the part
	// checksums no longer match, the upload is refused, and the next sync tries again.
	p := filepath.Join(src, "big.bin")
	changed := strings.ToUpper(big)
	os.WriteFile(p, []byte(big[:len(big)-1]+"!"), 0o644)
	st.beforeUpload = func(string) {
		os.WriteFile(p, []byte(changed), 0o644)
		later := time.Now().Add(time.Minute)
		os.Chtimes(p, later, later)
	}
	_, err := c.Sync(context.Background(), src, "s3://b/", opts)
	if err == nil || !errors.Is(err, errChanged) {
		t.Fatalf("err = %v, want a file-changed error", err)
	}
	if o, _ := st.get("b", "big.bin"); string(o.data) != big {
		t.Error("the refused upload replaced the object")
	}
	st.beforeUpload = nil
	if got := mustSync(t, c, src, "s3://b/", opts); got.Files != 1 {
		t.Errorf("next sync: %+v, want the file uploaded", got)
	}
	if o, _ := st.get("b", "big.bin"); string(o.data) != changed {
		t.Error("object is not the file's final content")
	}
}

func TestCRCCombine(t *testing.T) {
	data := randomBytes(3<<20 + 17)
	want := crc32.Checksum(data, castagnoli())
	for _, cut := range []int{0, 1, 7, 1 << 20, len(data) - 1, len(data)} {
		a := crc32.Checksum(data[:cut], castagnoli())
		b := crc32.Checksum(data[cut:], castagnoli())
		if got := crcCombine(a, b, int64(len(data)-cut)); got != want {
			t.Errorf("cut at %d: combined %08x, want %08x", cut, got, want)
		}
	}
	sm, err := sumFile(context.Background(), bytes.NewReader(data), int64(len(data)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if sm.crc != want || len(sm.parts) != 4 || sm.sha != "" {
		t.Errorf("sumFile = %08x, %d parts, %s", sm.crc, len(sm.parts), sm.sha)
	}
	if sm.parts[3] != crc32.Checksum(data[3<<20:], castagnoli()) {
		t.Error("last part's CRC is wrong")
	}
}

func TestPartSizes(t *testing.T) {
	for _, tc := range []struct{ size, want int64 }{
		{8 << 20, 8 << 20},
		{256 << 20, 16 << 20},
		{2 << 30, 64 << 20},
		{1 << 40, (1<<40 + maxParts - 1) / maxParts},
	} {
		got := autoPartSize(tc.size)
		if got != tc.want || (tc.size+got-1)/got > maxParts || got < minPartSize {
			t.Errorf("autoPartSize(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
	if got := fixPartSize(100<<30, 5<<20); (100<<30+got-1)/got > maxParts {
		t.Errorf("fixPartSize(100 GiB, 5 MiB) = %d: more than %d parts", got, maxParts)
	}
}

// TestMemCRCIdentity: a file sent from disk (1 MiB and more) is known by its CRC32C alone;
// touched without change, it is compared by it and not sent again; changed under the same
// size, it is.
func TestMemCRCIdentity(t *testing.T) {
	c, st := newMemClient(t)
	opts := Options{StateDir: t.TempDir()}
	src := t.TempDir()
	data := randomBytes(2 << 20)
	writeTree(t, src, map[string]string{"w.bin": string(data)})
	if got := mustSync(t, c, src, "s3://b/", opts); got.Files != 1 {
		t.Fatalf("stats = %+v", got)
	}
	if o, _ := st.get("b", "w.bin"); o.meta[metaSHA256] != "" || o.meta[metaCRC32C] != crcHex(crc32.Checksum(data, castagnoli())) {
		t.Errorf("metadata %v: want the CRC32C and no SHA-256", o.meta)
	}
	p := filepath.Join(src, "w.bin")
	later := time.Now().Add(-time.Minute)
	os.Chtimes(p, later, later)
	for _, o := range []Options{opts, {StateDir: t.TempDir()}} { // with the record, and without
		before := st.uploads.Load()
		if got := mustSync(t, c, src, "s3://b/", o); got.Files != 0 || st.uploads.Load() != before {
			t.Errorf("touched file: %+v, %d uploads; want it skipped", got, st.uploads.Load()-before)
		}
	}
	data[1<<20] ^= 1
	writeTree(t, src, map[string]string{"w.bin": string(data)})
	os.Chtimes(p, later, later.Add(time.Second))
	if got := mustSync(t, c, src, "s3://b/", Options{StateDir: t.TempDir()}); got.Files != 1 {
		t.Errorf("changed file, same size, no record: %+v, want it uploaded", got)
	}
}
