package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Dir is a Store in a local directory: the checkpoints of a runall whose task file has no
// S3 destination, kept across its reruns on the same disk. Every open, copy, rename and
// removal under it goes through an os.Root of it, so that neither a name read back from a
// manifest nor a link planted in the store reaches outside it.
type Dir struct{ root string }

// NewDir keeps checkpoints under root.
func NewDir(root string) *Dir { return &Dir{root: root} }

// Where is the trial's folder.
func (d *Dir) Where(trial string) string {
	return filepath.Join(d.root, trial) + string(filepath.Separator)
}

// open is the store's root, made when it is not there yet (runall's own folder).
func (d *Dir) open() (*os.Root, error) {
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return nil, err
	}
	return os.OpenRoot(d.root)
}

// at opens the store's root for an operation on trial's folder (and version's, when not
// ""), refusing names that are not plain; errors name where under the store it was.
func (d *Dir) at(trial, version string) (*os.Root, error) {
	if err := checkName("trial", trial); err != nil {
		return nil, fmt.Errorf("checkpoint store %s: %w", d.root, err)
	}
	if version != "" {
		if err := checkName("version", version); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Where(trial), err)
		}
	}
	return d.open()
}

func (d *Dir) ReadManifest(_ context.Context, trial string) ([]byte, string, error) {
	r, err := d.at(trial, "")
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	b, err := r.ReadFile(filepath.Join(trial, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", d.Where(trial)+ManifestName, err)
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
	r, err := d.at(trial, "")
	if err != nil {
		return err
	}
	defer r.Close()
	where := d.Where(trial) + ManifestName
	if err := r.MkdirAll(trial, 0o755); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	lock, err := r.OpenFile(filepath.Join(trial, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", d.Where(trial), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	_, cur, err := d.ReadManifest(ctx, trial)
	if err != nil {
		return err
	}
	if cur != tag {
		return fmt.Errorf("%s: %w", where, ErrConflict)
	}
	name := filepath.Join(trial, ManifestName)
	if err := r.WriteFile(name+".tmp", body, 0o644); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := r.Rename(name+".tmp", name); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

func (d *Dir) Put(_ context.Context, dir, trial, version string) error {
	if err := checkName("version", version); err != nil {
		return fmt.Errorf("%s: %w", d.Where(trial), err)
	}
	r, err := d.at(trial, version)
	if err != nil {
		return err
	}
	defer r.Close()
	src, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer src.Close()
	to := filepath.Join(trial, version)
	if err := r.MkdirAll(to, 0o755); err != nil {
		return fmt.Errorf("%s: %w", d.Where(trial)+version, err)
	}
	dst, err := r.OpenRoot(to)
	if err != nil {
		return fmt.Errorf("%s: %w", d.Where(trial)+version, err)
	}
	defer dst.Close()
	return copyTree(src, dst)
}

func (d *Dir) Get(_ context.Context, trial, version, dir string) error {
	if err := checkName("version", version); err != nil {
		return fmt.Errorf("%s: %w", d.Where(trial), err)
	}
	r, err := d.at(trial, version)
	if err != nil {
		return err
	}
	defer r.Close()
	src, err := r.OpenRoot(filepath.Join(trial, version))
	if err != nil {
		return fmt.Errorf("%s: %w", d.Where(trial)+version, err)
	}
	defer src.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil { // the staging folder runall names
		return err
	}
	dst, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer dst.Close()
	return copyTree(src, dst)
}

func (d *Dir) Drop(_ context.Context, trial, version string) error {
	r, err := d.at(trial, version)
	if err != nil {
		return err
	}
	defer r.Close()
	if version == "" {
		// The manifest first: what is left is never named by one.
		err := r.Remove(filepath.Join(trial, ManifestName))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", d.Where(trial)+ManifestName, err)
		}
	}
	if err := r.RemoveAll(filepath.Join(trial, version)); err != nil {
		return fmt.Errorf("%s: %w", d.Where(trial)+version, err)
	}
	return nil
}
