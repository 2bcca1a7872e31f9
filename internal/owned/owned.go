// Package owned holds the directories runall owns (the log directory, the directory of a
// downloaded url: script, the simulated GPUs' state, the sync record's directory, the
// directory of a file outfile replaces, a temporary directory it made: a step's exported
// environment, the MPS daemons' pipes and logs) and is the one way runall removes, renames
// or replaces a file in them: every name goes through an os.Root opened on the directory,
// so that a name that leaves it (`..`, an absolute path, a symlink planted to point out) is
// refused by the kernel-backed walk rather than followed. A Dir made by Temp is runall's
// own whole, and Close removes it; a Dir made by Open is a place runall writes into, and
// only names inside it are ever removed. make check (internal/limits) refuses a removal,
// rename, truncation or append outside this package, an *os.Root's methods and the few
// files it lists (internal/limits/fence.go).
package owned

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a directory runall owns, reached only through its os.Root.
type Dir struct {
	root *os.Root
	temp bool // made by Temp: Close removes it whole
}

// Open opens dir, making it (and its parents) when missing, to work inside it.
func Open(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Dir{root: root}, nil
}

// Temp makes a new directory under the system's temporary directory (os.MkdirTemp's
// pattern), which Close removes with everything in it.
func Temp(pattern string) (*Dir, error) {
	path, err := os.MkdirTemp("", pattern)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, errors.Join(err, removeFromParent(path))
	}
	return &Dir{root: root, temp: true}, nil
}

// Path is the directory's path, as it was opened.
func (d *Dir) Path() string { return d.root.Name() }

// Join is the path of name inside the directory, for what runs outside runall (a shell).
func (d *Dir) Join(name string) string { return filepath.Join(d.Path(), name) }

// Close lets go of the directory; one made by Temp is removed with everything in it.
func (d *Dir) Close() error {
	err := d.root.Close()
	if d.temp {
		err = errors.Join(err, removeFromParent(d.Path()))
	}
	return err
}

// removeFromParent removes path, which Temp made, through a root on its parent: a symlink
// put in its place is removed itself, never followed.
func removeFromParent(path string) error {
	parent, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer parent.Close()
	return parent.RemoveAll(filepath.Base(path))
}

// wrap names the directory in an error about a name inside it.
func (d *Dir) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("in %s: %w", d.Path(), err)
}

// MkdirAll makes the directory name inside d, and its parents.
func (d *Dir) MkdirAll(name string) error { return d.wrap(d.root.MkdirAll(name, 0o755)) }

// Remove removes the file, empty directory or symlink name inside d.
func (d *Dir) Remove(name string) error { return d.wrap(d.root.Remove(name)) }

// RemoveAll removes name inside d with everything below it; d itself (".") is refused.
func (d *Dir) RemoveAll(name string) error { return d.wrap(d.root.RemoveAll(name)) }

// Rename moves oldname to newname, both inside d, replacing what newname was.
func (d *Dir) Rename(oldname, newname string) error {
	return d.wrap(d.root.Rename(oldname, newname))
}

// Symlink points name inside d at target, replacing a symlink or file name was. The target
// is the link's text: what follows it through d stays inside d all the same.
func (d *Dir) Symlink(target, name string) error {
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d.wrap(err)
	}
	return d.wrap(d.root.Symlink(target, name))
}

// OpenAppend opens name inside d to append to, creating it when missing.
func (d *Dir) OpenAppend(name string) (*os.File, error) {
	f, err := d.root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	return f, d.wrap(err)
}

// WriteFile replaces name inside d with data, as Replace does.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return d.Replace(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
