package s3sync

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// tempMarker is in the name of every file runall writes before renaming it into place
// (".name.runall-tmp-1a2b3c4d"). Local walks skip such files: they are runall's own,
// left behind only if the process was killed.
const tempMarker = ".runall-tmp-"

// stagingPrefix names the directory an archive is extracted into before its files move
// into place.
const stagingPrefix = ".runall-extract-"

func isOwnTemp(name string) bool {
	return strings.Contains(name, tempMarker) || strings.HasPrefix(name, stagingPrefix)
}

// tempName is a fresh temporary name next to rel (slash-separated).
func tempName(rel string) string {
	dir, base := path.Split(rel)
	return dir + "." + base + tempMarker + randomHex()
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// localFile is a regular file found by a walk.
type localFile struct {
	rel string // slash-separated, relative to the walk's root
	st  stamp
}

// walkLocal lists the regular files under root (symlinks to files count as files when
// links), skipping excluded ones, runall's temp files, and skip (the state directory, when
// inside root).
func walkLocal(root string, ex *matcher, skip string, links bool, logf func(string, ...any), fn func(localFile)) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if isOwnTemp(d.Name()) || ex.excluded(rel) || (skip != "" && p == skip) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch mode := d.Type(); {
		case mode.IsDir():
			return nil
		case mode.IsRegular():
			fi, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed since the directory was read
				}
				return err
			}
			fn(localFile{rel: rel, st: statStamp(fi)})
		case mode&fs.ModeSymlink != 0 && links:
			fi, err := os.Stat(p)
			switch {
			case err != nil:
				logf("skipping %s: broken symlink", p)
			case fi.IsDir():
				logf("skipping %s: symlink to a directory (not followed)", p)
			case fi.Mode().IsRegular():
				fn(localFile{rel: rel, st: statStamp(fi)})
			}
		}
		return nil // sockets, devices, fifos: not data
	})
}

// hashFile returns the hex SHA-256 of the first size bytes of the file at p and, when
// withMD5, their hex MD5 too (to compare with a single-part object's ETag).
func hashFile(p string, size int64, withMD5 bool) (sha, md5sum string, err error) {
	f, err := os.Open(p)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	hs := sha256.New()
	var w io.Writer = hs
	hm := md5.New()
	if withMD5 {
		w = io.MultiWriter(hs, hm)
	}
	n, err := io.Copy(w, io.NewSectionReader(f, 0, size))
	if err != nil {
		return "", "", err
	}
	if n != size {
		return "", "", fmt.Errorf("%s shrank while it was read", p)
	}
	sha = hex.EncodeToString(hs.Sum(nil))
	if withMD5 {
		md5sum = hex.EncodeToString(hm.Sum(nil))
	}
	return sha, md5sum, nil
}

// crcFile returns the CRC32C of the first size bytes of the file at p.
func crcFile(ctx context.Context, p string, size int64) (uint32, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	c, err := crcSection(ctx, f, 0, size)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return c, nil
}

// checkRel refuses an object key whose path under the destination would not be a plain
// relative path: "..", absolute, or with empty or "." segments.
func checkRel(key, rel, root string) error {
	if rel == "" || !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel {
		return fmt.Errorf("object key %q would land outside %s or on an odd path; refusing to sync (nothing was downloaded)", key, root)
	}
	return nil
}
