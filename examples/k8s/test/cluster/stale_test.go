package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReapStale: a cluster directory left by a killed test binary (a process naming it, a
// mount below it) is cleared by the next Start; a directory without the marker is left alone.
func TestReapStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts need root")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stale := filepath.Join(tmp, "k8s-1")
	other := filepath.Join(tmp, "k8s-2")
	mnt := filepath.Join(stale, "ctd", "shm")
	for _, d := range []string{mnt, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(stale, marker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	// one process (no child to outlive it) whose command line names the directory, as a shim's does
	shim := exec.Command("tail", "-f", filepath.Join(stale, marker))
	if err := shim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = shim.Wait(); close(exited) }()
	t.Cleanup(func() { _ = shim.Process.Kill() })

	made := filepath.Join(tmp, "var-lib-kubelet") // stands for /var/lib/kubelet, made by the stale cluster
	named := filepath.Join(tmp, "named")          // named in its file, but not one of the known paths
	for _, d := range []string{made, named} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(stale, madeFile), []byte(made+"\n"+named), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reapStale([]string{made}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Errorf("the stale cluster's process still runs")
	}
	if m := mountsUnder(stale); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s still there", stale)
	}
	if _, err := os.Stat(made); err == nil {
		t.Errorf("%s, made by the stale cluster, still there", made)
	}
	if _, err := os.Stat(named); err != nil {
		t.Errorf("%s, named in the file but not a known path, was removed: %v", named, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("%s, not the fixture's, was removed: %v", other, err)
	}
}
