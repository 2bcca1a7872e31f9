package owned

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Replace writes name inside d with what write writes, through a temporary file beside it
// renamed into place: a reader sees the old file or the whole new one, and a write that
// fails leaves the old one. The file gets perm exactly (no umask), as os.CreateTemp's file
// chmodded would. A symlink at name is replaced, never followed.
func (d *Dir) Replace(name string, perm fs.FileMode, write func(io.Writer) error) error {
	f, tmp, err := d.createTemp(name)
	if err != nil {
		return d.wrap(err)
	}
	err = f.Chmod(perm)
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, name)
	}
	if err != nil {
		_ = d.root.Remove(tmp)
		return d.wrap(err)
	}
	return nil
}

// createTemp makes a new file beside name, under a name of its own that nothing else uses.
func (d *Dir) createTemp(name string) (*os.File, string, error) {
	dir, base := filepath.Split(name)
	for range 10 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(b[:]))
		f, err := d.root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", errors.New("no free temporary name beside " + name)
}
