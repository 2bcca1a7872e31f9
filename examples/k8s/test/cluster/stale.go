package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// marker names a cluster's directory as the fixture's, so that a later Start may clear it.
const marker = "runall-k8s-cluster"

// dirPattern is the cluster directories' pattern in the temporary directory.
const dirPattern = "k8s-*"

// reapStale clears what clusters of test binaries that were killed before their teardown (a
// go test -timeout, a SIGKILL) left: their containers and shims, their mounts, their
// directories. Called under the machine lock, so no cluster is live: every live one holds it.
func reapStale() error {
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
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("a stale cluster in %s: %w", dir, err)
		}
	}
	return nil
}
