package cluster

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvGate is the variable that turns the cluster tests on: they start seven daemons and take
// tens of seconds, so `go test ./...` skips them unless K8S_E2E=1.
const EnvGate = "K8S_E2E"

// controlPlane are the binaries `make k8s-bin` builds; node are those Debian packages.
var (
	controlPlane = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"}
	node         = []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr"}
)

// binaries are the paths of every program the cluster runs.
type binaries struct {
	dir    string            // the Kubernetes binaries' directory
	path   map[string]string // name -> path
	cniDir string            // the CNI plugins (loopback)
}

// unavailable skips t, or fails it under CI=true, where a missing binary is a missing
// install step rather than a machine without the cluster.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI: %s", msg)
	}
	t.Skip(msg)
}

// Skip skips t unless the cluster tests were asked for (K8S_E2E=1).
func Skip(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvGate) != "1" {
		t.Skipf("a real Kubernetes cluster: set %s=1 (make k8s-e2e does, after make k8s-bin)", EnvGate)
	}
}

// findBinaries locates the Kubernetes binaries ($K8S_BIN, else the cache of make k8s-bin for
// the version go.mod pins), containerd, runc and the CNI loopback plugin.
func findBinaries(t testing.TB) binaries {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "a real kubelet and containerd need root")
	}
	dir := os.Getenv("K8S_BIN")
	if dir == "" {
		v, err := kubernetesVersion()
		if err != nil {
			t.Fatalf("the cluster's version: %v", err)
		}
		dir = filepath.Join(cacheHome(), "runall-k8s", "v"+v, "bin")
	}
	b := binaries{dir: dir, path: map[string]string{}, cniDir: "/usr/lib/cni"}
	for _, n := range controlPlane {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
			unavailable(t, "%s: missing; run make k8s-bin (or set K8S_BIN to a directory holding %s)", p, strings.Join(controlPlane, ", "))
		}
		b.path[n] = p
	}
	for _, n := range node {
		p, err := exec.LookPath(n)
		if err != nil {
			unavailable(t, "%s: not on PATH; apt-get install containerd runc", n)
		}
		b.path[n] = p
	}
	if _, err := os.Stat(filepath.Join(b.cniDir, "loopback")); err != nil {
		unavailable(t, "%s/loopback: missing; apt-get install containernetworking-plugins", b.cniDir)
	}
	return b
}

func cacheHome() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache")
}

// kubernetesVersion is the Kubernetes release matching k8s.io/api in this module's go.mod
// (v0.37.2 is 1.37.2): the one place the version is pinned, which scripts/k8s-bin.sh reads too.
func kubernetesVersion() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; ; dir = filepath.Dir(dir) {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				fields := strings.Fields(sc.Text())
				if len(fields) >= 2 && fields[0] == "k8s.io/api" && strings.HasPrefix(fields[1], "v0.") {
					return "1." + strings.TrimPrefix(fields[1], "v0."), nil
				}
			}
			return "", fmt.Errorf("%s: no k8s.io/api v0.X.Y requirement", f.Name())
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
	}
}
