package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Dir is a Store in a local directory: the checkpoints of a runall whose task file has no
// S3 destination, kept across its reruns on the same disk.
type Dir struct{ root string }

// NewDir keeps checkpoints under root.
func NewDir(root string) *Dir { return &Dir{root: root} }

// Where is the trial's folder.
func (d *Dir) Where(trial string) string {
	return filepath.Join(d.root, trial) + string(filepath.Separator)
}

func (d *Dir) ReadManifest(_ context.Context, trial string) ([]byte, string, error) {
	b, err := os.ReadFile(filepath.Join(d.root, trial, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return b, tagOf(b), nil
}

func tagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// WriteManifest compares and writes under an flock of the trial's folder, so that two
// runalls on one disk write it in turn; the new manifest is renamed into place whole.
func (d *Dir) WriteManifest(ctx context.Context, trial string, body []byte, tag string) error {
	dir := filepath.Join(d.root, trial)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", dir, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	_, cur, err := d.ReadManifest(ctx, trial)
	if err != nil {
		return err
	}
	if cur != tag {
		return fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), ErrConflict)
	}
	return writeFileAtomic(filepath.Join(dir, manifestName), body)
}

func (d *Dir) Put(_ context.Context, dir, trial, version string) error {
	return copyTree(dir, filepath.Join(d.root, trial, version))
}

func (d *Dir) Get(_ context.Context, trial, version, dir string) error {
	return copyTree(filepath.Join(d.root, trial, version), dir)
}

func (d *Dir) Drop(_ context.Context, trial, version string) error {
	if version == "" {
		// The manifest first: what is left is never named by one.
		if err := os.Remove(filepath.Join(d.root, trial, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(d.root, trial, version))
}

// writeFileAtomic writes path through a temporary file renamed over it.
func writeFileAtomic(path string, body []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, body, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// copyTree copies the regular files and directories under src into dst, which it creates.
// Links and other special files are left out: a checkpoint is files.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case e.IsDir():
			return os.MkdirAll(target, 0o755)
		case e.Type().IsRegular():
			return copyFile(path, target)
		}
		return nil
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}
