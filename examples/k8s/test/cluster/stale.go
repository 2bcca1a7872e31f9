package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		killMatching(dir)
		if err := unmountUnder(dir); err != nil {
			return fmt.Errorf("a stale cluster in %s: %w", dir, err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, madeFile))
		for _, p := range strings.Split(string(data), "\n") {
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
	return os.WriteFile(filepath.Join(dir, madeFile), []byte(strings.Join(absent, "\n")), 0o644)
}
