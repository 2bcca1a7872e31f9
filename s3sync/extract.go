package s3sync

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runall/runall/internal/pathname"
)

type archiveKind int

const (
	kindUnknown archiveKind = iota
	kindZip
	kindTar
	kindTarGz
)

func kindByName(name string) archiveKind {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".zip"):
		return kindZip
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"):
		return kindTarGz
	case strings.HasSuffix(n, ".tar"):
		return kindTar
	}
	return kindUnknown
}

func kindByContent(f io.ReaderAt) archiveKind {
	var head [262]byte
	n, _ := f.ReadAt(head[:], 0)
	b := head[:n]
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")), bytes.HasPrefix(b, []byte("PK\x05\x06")):
		return kindZip
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		return kindTarGz
	case len(b) >= 262 && string(b[257:262]) == "ustar":
		return kindTar
	}
	return kindUnknown
}

// extractFile unpacks archive (named name, for its kind) into dir and returns the regular
// files it made, with their stamps. Excluded entries are skipped.
func extractFile(ctx context.Context, archive, name, dir string, ex *matcher) (map[string]stamp, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kind := kindByName(name)
	if kind == kindUnknown {
		kind = kindByContent(f)
	}
	if kind == kindUnknown {
		return nil, fmt.Errorf("%s is not a .zip, .tar, .tar.gz or .tgz archive", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()

	staging := stagingPrefix + randomHex()
	if err := root.Mkdir(staging, 0o700); err != nil {
		return nil, err
	}
	defer root.RemoveAll(staging)
	sroot, err := root.OpenRoot(staging)
	if err != nil {
		return nil, err
	}
	defer sroot.Close()

	x := &extractor{ctx: ctx, root: sroot, ex: ex, links: pathname.Links{}, files: map[string]bool{}}
	switch kind {
	case kindZip:
		var fi fs.FileInfo
		if fi, err = f.Stat(); err == nil {
			err = x.zip(f, fi.Size())
		}
	case kindTar:
		err = x.tar(bufio.NewReaderSize(f, 1<<20))
	case kindTarGz:
		var gz *gzip.Reader
		if gz, err = gzip.NewReader(bufio.NewReaderSize(f, 1<<20)); err == nil {
			err = x.tar(gz)
		}
	}
	if err == nil {
		err = x.checkLinks()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return x.merge(root, staging)
}

// extractor writes archive entries under a staging root, checking each name and link.
type extractor struct {
	ctx   context.Context
	root  *os.Root
	ex    *matcher
	links pathname.Links  // symlinks made so far, to their targets: nothing may be written through them
	files map[string]bool // regular files made so far: hard link targets
	order []string        // entries in archive order, for the merge
}

// entryName checks an entry's name and returns it clean, or "" for the archive's root.
func entryName(name string) (string, error) {
	n := strings.ReplaceAll(name, `\`, "/")
	if strings.HasPrefix(n, "/") || filepath.IsAbs(name) {
		return "", fmt.Errorf("archive entry %q has an absolute path; refusing to extract", name)
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." {
			return "", fmt.Errorf("archive entry %q leaves the destination (..); refusing to extract", name)
		}
	}
	n = path.Clean(n)
	if n == "." {
		return "", nil
	}
	if !filepath.IsLocal(n) {
		return "", fmt.Errorf("archive entry %q is not a plain relative path; refusing to extract", name)
	}
	return n, nil
}

// prepare checks that no parent of n is a symlink made earlier (writing through one could
// land somewhere its lexical path does not say: pathname.Links, the rule a checkpoint's
// manifest is held to) and creates the parents.
func (x *extractor) prepare(orig, n string) error {
	if d := x.links.Through(n); d != "" {
		return fmt.Errorf("archive entry %q goes through the symlink %q; refusing to extract", orig, d)
	}
	if d := path.Dir(n); d != "." {
		if err := x.root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("archive entry %q: %w", orig, err)
		}
	}
	// A later entry of the same name replaces the earlier one, as tar does.
	if err := x.root.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if fi, serr := x.root.Lstat(n); serr == nil && fi.IsDir() {
			return fmt.Errorf("archive entry %q: a directory of that name is already there", orig)
		}
		return fmt.Errorf("archive entry %q: %w", orig, err)
	}
	delete(x.links, n)
	delete(x.files, n)
	return nil
}

func (x *extractor) dir(orig, n string) error {
	d := x.links.Through(n)
	if _, isLink := x.links[n]; isLink {
		d = n
	}
	if d != "" {
		return fmt.Errorf("archive entry %q goes through the symlink %q; refusing to extract", orig, d)
	}
	if err := x.root.MkdirAll(n, 0o755); err != nil {
		return fmt.Errorf("archive entry %q: %w", orig, err)
	}
	x.order = append(x.order, n)
	return nil
}

func (x *extractor) file(orig, n string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	if err := x.prepare(orig, n); err != nil {
		return err
	}
	f, err := x.root.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm()|0o600)
	if err != nil {
		return fmt.Errorf("archive entry %q: %w", orig, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("archive entry %q: %w", orig, err)
	}
	if !mtime.IsZero() {
		x.root.Chtimes(n, mtime, mtime)
	}
	x.files[n] = true
	x.order = append(x.order, n)
	return nil
}

func (x *extractor) symlink(orig, n, target string) error {
	if err := x.prepare(orig, n); err != nil {
		return err
	}
	t := strings.ReplaceAll(target, `\`, "/")
	if filepath.IsAbs(target) || x.links.Why(n, t) != "" { // among the links made so far; checkLinks judges them all
		return fmt.Errorf("archive entry %q is a symlink to %q, outside the destination; refusing to extract", orig, target)
	}
	if err := x.root.Symlink(target, n); err != nil {
		return fmt.Errorf("archive entry %q: %w", orig, err)
	}
	x.links[n] = t
	x.order = append(x.order, n)
	return nil
}

func (x *extractor) hardlink(orig, n, target string) error {
	t, err := entryName(target)
	if err != nil || t == "" {
		return fmt.Errorf("archive entry %q is a hard link to %q, outside the destination; refusing to extract", orig, target)
	}
	if !x.files[t] {
		return fmt.Errorf("archive entry %q is a hard link to %q, which is not a file extracted before it", orig, target)
	}
	if err := x.prepare(orig, n); err != nil {
		return err
	}
	if err := x.root.Link(t, n); err != nil {
		return fmt.Errorf("archive entry %q: %w", orig, err)
	}
	x.files[n] = true
	x.order = append(x.order, n)
	return nil
}

// checkLinks refuses the archive when one of its symlinks leads outside the destination
// once all are made: a later link on an earlier one's way ("b" to "a/..", then "a" to ".")
// changes where the kernel takes it.
func (x *extractor) checkLinks() error {
	refused := x.links.Refused()
	if len(refused) == 0 {
		return nil
	}
	n := slices.Sorted(maps.Keys(refused))[0]
	return fmt.Errorf("archive entry %q is a symlink to %q, outside the destination once the archive's other links are made (%s); refusing to extract",
		n, x.links[n], refused[n])
}

// merge moves the staged entries into root: directories are created, files and symlinks
// renamed over what is there. It never writes through a symlink in the destination.
func (x *extractor) merge(root *os.Root, staging string) (map[string]stamp, error) {
	files := map[string]stamp{}
	done := map[string]bool{}
	for _, n := range x.order {
		if done[n] {
			continue
		}
		done[n] = true
		if err := destParents(root, n); err != nil {
			return nil, err
		}
		fi, err := x.root.Lstat(n)
		if err != nil {
			continue // replaced by a later entry of another kind
		}
		if fi.IsDir() {
			dfi, err := root.Lstat(n)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				if err := root.Mkdir(n, 0o755); err != nil {
					return nil, err
				}
			case err != nil:
				return nil, err
			case !dfi.IsDir():
				return nil, fmt.Errorf("cannot extract directory %q: %s is in the way", n, describe(dfi))
			}
			continue
		}
		if dfi, err := root.Lstat(n); err == nil && dfi.IsDir() {
			return nil, fmt.Errorf("cannot extract %q: a directory of that name is in the way", n)
		}
		if err := root.Rename(path.Join(staging, n), n); err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() {
			if st, err := root.Lstat(n); err == nil {
				files[n] = statStamp(st)
			}
		}
	}
	return files, nil
}

// destParents checks that n's parents in the destination are directories (not symlinks,
// which could lead elsewhere) and creates missing ones.
func destParents(root *os.Root, n string) error {
	var parents []string
	for d := path.Dir(n); d != "."; d = path.Dir(d) {
		parents = append(parents, d)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		d := parents[i]
		fi, err := root.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("cannot extract %q: %q in the destination is a symlink; refusing to write through it", n, d)
		case !fi.IsDir():
			return fmt.Errorf("cannot extract %q: %q in the destination is not a directory", n, d)
		}
	}
	return nil
}

func describe(fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "a symlink"
	}
	return "a file"
}
