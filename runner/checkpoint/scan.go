package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// scan is what a checkpoint directory held when it was looked at: each regular file's
// size, modification time and mode, by its path relative to the directory; the links kept
// as links; and what a copy leaves out, with why.
type scan struct {
	files  map[string]fileStamp
	links  map[string]string // slash-separated path: target, inside the directory
	left   map[string]string // slash-separated path: why a copy leaves it out
	bytes  int64
	newest time.Time // the newest modification time: when the directory last changed
}

type fileStamp struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

// scanDir looks at dir; a directory that is not there holds nothing, and a link in its
// place is refused (refuseLink).
func scanDir(dir string) (scan, error) {
	s := scan{files: map[string]fileStamp{}, links: map[string]string{}, left: map[string]string{}}
	if err := refuseLink(dir); err != nil {
		return s, err
	}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walked: the next scan sees what replaced it
			}
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		switch t := e.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			s.link(dir, path, rel)
			return nil
		case !t.IsRegular():
			s.left[rel] = kindOf(t)
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		s.files[rel] = fileStamp{fi.Size(), fi.ModTime(), fi.Mode()}
		s.bytes += fi.Size()
		if fi.ModTime().After(s.newest) {
			s.newest = fi.ModTime()
		}
		return nil
	})
	s.dropLinks()
	return s, err
}

// link takes the link at path (rel in dir), an absolute target inside dir made relative;
// dropLinks then leaves out those that do not stay inside.
func (s *scan) link(dir, path, rel string) {
	target, err := os.Readlink(path)
	if err != nil {
		return // removed while walked
	}
	if filepath.IsAbs(target) && !slices.Contains(strings.Split(target, "/"), "..") { // a .. after a link is not the text's: left absolute, left out
		if r, err := filepath.Rel(filepath.Dir(path), target); err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			target = r
		}
	}
	s.links[rel] = filepath.ToSlash(target)
}

// dropLinks leaves out of the copy each link that would not stay inside the directory once
// all are made again (refusedLinks: a restore would refuse the manifest that held it).
func (s *scan) dropLinks() {
	for rel, why := range refusedLinks(s.links) {
		s.left[rel] = "a link to " + s.links[rel] + ": " + why
		delete(s.links, rel)
	}
}

func kindOf(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

func (s scan) empty() bool { return len(s.files) == 0 && len(s.links) == 0 }

func (s scan) same(o scan) bool { return maps.Equal(s.files, o.files) && maps.Equal(s.links, o.links) }

// leftOut says what a copy of s leaves out, and why; "" when nothing.
func (s scan) leftOut() string {
	var out []string
	for _, rel := range slices.Sorted(maps.Keys(s.left)) {
		out = append(out, rel+" ("+s.left[rel]+")")
	}
	return strings.Join(out, ", ")
}

// ErrLinkDir is a checkpoint directory that is itself a symbolic link: runall neither
// looks inside one (its copies would be of a place it does not own) nor replaces it with
// the directory it restores (it replaces only what it made).
var ErrLinkDir = errors.New("is a symbolic link")

// refuseLink refuses dir when it is a symbolic link, saying where it points and what to do.
func refuseLink(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	target, _ := os.Readlink(dir)
	return fmt.Errorf("checkpoint directory %s %w (to %s): runall keeps and restores the directory itself and never replaces a link it did not make; "+
		"name the directory it points to in checkpoint:, or remove the link", dir, ErrLinkDir, target)
}
