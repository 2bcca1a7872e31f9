package checkpoint

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// noFollow opens a file of the directory itself, never a link put in its place since it was listed.
const noFollow = syscall.O_NOFOLLOW

// copyTree copies the regular files and directories under src into dst, both through an
// os.Root, so that a link on either side is never followed out of it. Links are not copied
// (the manifest keeps those that stay inside the directory), nor are other special files: a
// checkpoint is files.
func copyTree(src, dst *os.Root) error {
	return fs.WalkDir(src.FS(), ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && name != "." {
				return nil // removed while walked: the scan after the copy sees it
			}
			return err
		}
		switch {
		case e.IsDir():
			return dst.MkdirAll(name, 0o755)
		case e.Type().IsRegular():
			return copyFile(src, dst, name)
		}
		return nil
	})
}

func copyFile(src, dst *os.Root, name string) error {
	in, err := src.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() { // replaced by something else since it was listed
		return nil
	}
	out, err := dst.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
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
	return dst.Chtimes(name, fi.ModTime(), fi.ModTime())
}
