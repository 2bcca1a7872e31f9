// The archive formats a download with extract: reads: each entry of a tar (plain or
// gzipped) or a zip file goes to the extractor, which stages it (extract.go).

package s3sync

import (
	"archive/tar"
	"archive/zip"
	"errors"
	"io"
	"io/fs"
	"strings"
)

func (x *extractor) tar(r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		n, err := entryName(hdr.Name)
		if err != nil {
			return err
		}
		if n == "" || x.ex.excluded(n) {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = x.dir(hdr.Name, n)
		case tar.TypeReg, tar.TypeRegA:
			err = x.file(hdr.Name, n, hdr.FileInfo().Mode(), hdr.ModTime, tr)
		case tar.TypeSymlink:
			err = x.symlink(hdr.Name, n, hdr.Linkname)
		case tar.TypeLink:
			err = x.hardlink(hdr.Name, n, hdr.Linkname)
		default:
			// Devices, fifos and the like are not data: skip them.
		}
		if err != nil {
			return err
		}
	}
}

func (x *extractor) zip(r io.ReaderAt, size int64) error {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return err
	}
	// Check every name first: a zip has its directory up front.
	for _, zf := range zr.File {
		if _, err := entryName(zf.Name); err != nil {
			return err
		}
	}
	for _, zf := range zr.File {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		n, _ := entryName(zf.Name)
		if n == "" || x.ex.excluded(n) {
			continue
		}
		mode := zf.Mode()
		switch {
		case mode.IsDir() || strings.HasSuffix(zf.Name, "/"):
			err = x.dir(zf.Name, n)
		case mode&fs.ModeSymlink != 0:
			var target []byte
			if target, err = readZipEntry(zf, 4096); err == nil {
				err = x.symlink(zf.Name, n, string(target))
			}
		case mode.IsRegular():
			var rc io.ReadCloser
			if rc, err = zf.Open(); err == nil {
				err = x.file(zf.Name, n, mode, zf.Modified, rc)
				rc.Close()
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readZipEntry(zf *zip.File, limit int64) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, limit))
}
