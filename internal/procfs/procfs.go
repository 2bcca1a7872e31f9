// Package procfs reads what runall needs of other processes from procfs: whether one holds a
// device open, and its name. The GPU probes, real and simulated, tell their processes by it.
package procfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HoldsOpen reports whether process pid, as procfs at root shows it, has a file open whose
// path starts with prefix: /dev/nvidia for a real GPU, a claim file for a simulated one.
// In another pid namespace's numbering the PID names no process here, or an unrelated one
// that holds nothing of the kind: then runall does not take it for one of its own.
func HoldsOpen(root string, pid uint32, prefix string) bool {
	dir := filepath.Join(root, strconv.FormatUint(uint64(pid), 10), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && strings.HasPrefix(target, prefix) {
			return true
		}
	}
	return false
}

// Comm is a process's name from procfs; "" when it cannot be read.
func Comm(root string, pid uint32) string {
	b, err := os.ReadFile(filepath.Join(root, strconv.FormatUint(uint64(pid), 10), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
