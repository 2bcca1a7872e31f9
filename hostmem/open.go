package hostmem

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Open finds the memory cgroup of the process that calls it, from procfs at procRoot ("":
// /proc): a cgroup v1 memory hierarchy where one is mounted (a hybrid machine keeps the
// memory controller there), else the unified one where it has the memory controller. With
// neither, the probe reads the machine's meminfo: no limit applies. Open never fails: what it
// cannot find leaves the machine's memory, and Read says what it cannot read.
func Open(procRoot string) *Probe {
	if procRoot == "" {
		procRoot = "/proc"
	}
	info := filepath.Join(procRoot, "meminfo")
	mounts := readMountinfo(filepath.Join(procRoot, "self", "mountinfo"))
	paths := readProcCgroup(filepath.Join(procRoot, "self", "cgroup"))
	for _, mt := range mounts {
		if mt.fstype == "cgroup" && slices.Contains(strings.Split(mt.super, ","), "memory") {
			if p, ok := paths.v1["memory"]; ok {
				if dir := cgroupDir(mt, p); fileExists(filepath.Join(dir, "memory.usage_in_bytes")) {
					return NewCgroupV1(dir, info)
				}
			}
		}
	}
	for _, mt := range mounts {
		if mt.fstype == "cgroup2" && paths.hasV2 {
			dir := cgroupDir(mt, paths.v2)
			if fileExists(filepath.Join(dir, "memory.current")) {
				return NewCgroupV2(dir, mt.point, info)
			}
		}
	}
	return NewMeminfo(info)
}

// mount is one cgroup line of mountinfo.
type mount struct {
	root   string // the directory of the hierarchy that is mounted (a container's own cgroup, say)
	point  string // where it is mounted
	fstype string
	super  string // super options: the v1 controllers
}

// readMountinfo lists the cgroup mounts of a mountinfo file (proc(5)):
// "36 35 0:30 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory".
func readMountinfo(path string) []mount {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || (g[0] != "cgroup" && g[0] != "cgroup2") {
			continue
		}
		out = append(out, mount{root: unescapeMount(f[3]), point: unescapeMount(f[4]), fstype: g[0], super: g[2]})
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupPaths is a process's cgroup file: its path in each v1 hierarchy by controller, and
// in the unified one.
type cgroupPaths struct {
	v1    map[string]string
	v2    string
	hasV2 bool
}

// readProcCgroup reads /proc/self/cgroup: "4:memory:/kubepods/pod1/abc", "0::/".
func readProcCgroup(path string) cgroupPaths {
	c := cgroupPaths{v1: map[string]string{}}
	b, err := os.ReadFile(path)
	if err != nil {
		return c
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			c.v2, c.hasV2 = f[2], true
			continue
		}
		for _, ctl := range strings.Split(f[1], ",") {
			c.v1[ctl] = f[2]
		}
	}
	return c
}

// cgroupDir is where the cgroup at path (as /proc/self/cgroup names it) is found under mount
// mt. A container usually has its own cgroup mounted as the root (mt.root is its path, or
// a cgroup namespace makes both "/"); a path outside the mounted root cannot be reached, and
// the mount's root, the container's own cgroup, is taken instead.
func cgroupDir(mt mount, path string) string {
	rel, err := filepath.Rel(mt.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return mt.point
	}
	dir := filepath.Join(mt.point, rel)
	if !fileExists(dir) {
		return mt.point
	}
	return dir
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
