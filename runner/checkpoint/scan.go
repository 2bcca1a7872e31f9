package checkpoint

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"time"
)

// scan is what a checkpoint directory held when it was looked at: each regular file's
// size, modification time and mode, by its path relative to the directory.
type scan struct {
	files  map[string]fileStamp
	bytes  int64
	newest time.Time // the newest modification time: when the directory last changed
}

type fileStamp struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

// scanDir looks at dir; a directory that is not there holds nothing.
func scanDir(dir string) (scan, error) {
	s := scan{files: map[string]fileStamp{}}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walked: the next scan sees what replaced it
			}
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		s.files[rel] = fileStamp{fi.Size(), fi.ModTime(), fi.Mode()}
		s.bytes += fi.Size()
		if fi.ModTime().After(s.newest) {
			s.newest = fi.ModTime()
		}
		return nil
	})
	return s, err
}

func (s scan) empty() bool { return len(s.files) == 0 }

func (s scan) same(o scan) bool { return maps.Equal(s.files, o.files) }
