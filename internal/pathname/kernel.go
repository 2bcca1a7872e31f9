// Package pathname is what a name reaches: a path judged as the kernel resolves it, not by
// its text, and whether a value can be one plain name (one element of a path or an object
// key). A path's links are followed before a ".." after them is taken (a/../b, a a link to
// x/y, names x/b, where filepath.Clean says b), and two names are one place when they reach
// one file. Every rule of runall's that says where a path may lead (a checkpoint directory
// runall owns, a destination that is not its source, a directory it does not create) asks it
// here; the links a tree is given (a checkpoint's manifest, an archive's entries) are judged
// by one rule, Links, as they will resolve once all are made; and a value put into a path or
// a key is held to one plain-name rule, WhyNotPlain.
package pathname

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxHops is how many links one resolution follows before it gives up, as the kernel's
// ELOOP does (40 on Linux).
const maxHops = 40

// Real is p made absolute (against the working directory as the kernel finds it) with every
// link in it followed, a ".." taken after the link before it, and a part that does not
// exist yet kept as written.
func Real(p string) string { return resolve(p, true) }

// NoFollow is Real but for p's last part, which is not followed when it is a link: the file
// that lstat (or a removal, or a rename) of p reaches.
func NoFollow(p string) string { return resolve(p, false) }

// Join is p taken against dir as a process in dir would take it: p itself when absolute or
// dir is "", else the two joined with nothing cleaned, so that Real takes its ".." after
// dir's links (filepath.Join would take them first).
func Join(dir, p string) string {
	switch {
	case p == "":
		if dir == "" {
			return "."
		}
		return dir
	case filepath.IsAbs(p) || dir == "":
		return p
	}
	return strings.TrimSuffix(dir, "/") + "/" + p
}

func resolve(p string, followLast bool) string {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(p)
		}
		p = wd + "/" + p // wd may be $PWD, a path through links: they are followed below
	}
	cur, hops := "/", 0
	rest := strings.Split(p, "/")
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		if len(rest) == 0 && !followLast {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil || hops >= maxHops {
			cur = next // not a link, or not there (yet): as written
			continue
		}
		hops++
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur
}

// Within reports whether path is dir or below it; both clean and absolute (Real's).
func Within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// Same reports whether a and b name one place: the same file (device and inode) where both
// exist, else the same path once resolved (Real).
func Same(a, b string) bool { return Identity(a) == Identity(b) }

// Identity is what p names, for comparing: its device and inode where it exists, else the
// path it resolves to (Real), where it would be made. Two names have one identity when they
// reach one file, whatever their text.
func Identity(p string) string {
	if fi, err := os.Stat(p); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("inode %d:%d", st.Dev, st.Ino)
		}
	}
	return "path " + Real(p)
}

// Clean is filepath.Clean where the text decides nothing ("." and doubled slashes taken
// out), and NoFollow where a ".." is to be taken: after the link before it, as the kernel
// takes it, not by dropping the part before it.
func Clean(p string) string {
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return NoFollow(p)
		}
	}
	return filepath.Clean(p)
}
