package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// RunallImage is the image scripts/k8s-image.sh builds: runall and busybox, running as the
// example's user 10001 in /opt/catdog.
const RunallImage = "docker.io/local/runall-test:1"

var images struct {
	once  sync.Once
	dir   string
	paths []string
	err   error
}

// Images builds runall (or takes $RUNALL_BIN, e.g. the release binary) and the test images
// with scripts/k8s-image.sh, once per test binary, and returns the archives to import. The
// directory is removed by CleanupImages, called from TestMain. It skips as Start does.
func Images(t testing.TB) []string {
	t.Helper()
	Skip(t) // before building anything: without K8S_E2E=1 there is no cluster to import into
	images.once.Do(func() { images.paths, images.err = buildImages() })
	if images.err != nil {
		t.Fatalf("test images: %v", images.err)
	}
	return images.paths
}

// CleanupImages removes what Images built.
func CleanupImages() {
	if images.dir != "" {
		os.RemoveAll(images.dir)
	}
}

func buildImages() ([]string, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	if images.dir, err = os.MkdirTemp("", "k8s-images-"); err != nil {
		return nil, err
	}
	bin := os.Getenv("RUNALL_BIN")
	if bin == "" {
		bin = filepath.Join(images.dir, "runall")
		build := exec.Command("go", "build", "-o", bin, "./cmd/runall")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/runall: %w: %s", err, out)
		}
	}
	script := exec.Command(filepath.Join(root, "scripts", "k8s-image.sh"), images.dir, bin)
	out, err := script.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("scripts/k8s-image.sh: %w: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Fields(lines[len(lines)-1]), nil
}

// repoRoot is the runall checkout this module lives in (examples/k8s/test).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "k8s-image.sh")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no scripts/k8s-image.sh above the test's directory")
}
