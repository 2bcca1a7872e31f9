package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// marker names a cluster's directory as the fixture's, so that a later Start may clear it.
const marker = "runall-k8s-cluster"

// dirPattern is the cluster directories' pattern in the temporary directory.
const dirPattern = "k8s-*"

// madeFile, in a cluster's directory, lists the outside paths that were absent when it started.
const madeFile = "outside-absent"

// reapStale clears what clusters of test binaries that were killed before their teardown (a
// go test -timeout, a SIGKILL) left: their containers and shims, their mounts, their
// directories, and the paths of known (the outside list) that each one's madeFile names.
// Called under the machine lock, so no cluster is live: every live one holds it.
func reapStale(known []string) error {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), dirPattern))
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
			continue // not a cluster's, or not this fixture's
		}
		data, _ := os.ReadFile(filepath.Join(dir, madeFile))
		made := strings.Split(string(data), "\n")
		killContainersOf(dir, slices.Contains(made, cgroupParentMade)) // their processes outlive the shims
		killMatching(dir)
		if err := unmountUnder(dir); err != nil {
			return fmt.Errorf("a stale cluster in %s: %w", dir, err)
		}
		for _, p := range made {
			if slices.Contains(known, p) { // a path of its own making, never one the file merely names
				if err := os.RemoveAll(p); err != nil {
					return fmt.Errorf("a stale cluster's %s: %w", p, err)
				}
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("a stale cluster in %s: %w", dir, err)
		}
	}
	return nil
}

// writeAbsent records in dir which of the outside paths were absent at the snapshot.
func writeAbsent(dir string, s snapshot) error {
	var absent []string
	for _, p := range outside {
		if !s.outside[p] {
			absent = append(absent, p)
		}
	}
	if !slices.ContainsFunc(cgroupDirs(), func(cg string) bool { return filepath.Base(cg) == cgroupParent }) {
		absent = append(absent, cgroupParentMade)
	}
	return os.WriteFile(filepath.Join(dir, madeFile), []byte(strings.Join(absent, "\n")), 0o644)
}

// cgroupParent is where containerd puts the containers' cgroups without QoS cgroups (its
// namespace's name); cgroupParentMade, in madeFile, says the cluster made it.
const (
	cgroupParent     = "k8s.io"
	cgroupParentMade = "cgroup:" + cgroupParent
)

// killContainersOf kills the processes of a stale cluster's containers, known by the task ids
// in its containerd's state directory, and removes their cgroups (and their parent, when that
// cluster made it).
func killContainersOf(dir string, parentMade bool) {
	tasks, _ := filepath.Glob(filepath.Join(dir, "ctd", "state", "io.containerd.runtime.v2.task", "k8s.io", "*"))
	ctrls, _ := filepath.Glob(filepath.Join(cgroupRoot, "*", cgroupParent))
	for _, parent := range ctrls {
		for _, task := range tasks {
			cg := filepath.Join(parent, filepath.Base(task))
			for try := 0; try < 50; try++ {
				for _, pid := range cgroupPids(cg) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				if err := syscall.Rmdir(cg); err == nil || errors.Is(err, syscall.ENOENT) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		if parentMade {
			_ = syscall.Rmdir(parent) // fails, as it should, while other cgroups are in it
		}
	}
}
