package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// outside are the paths the kubelet and containerd use whatever their configuration says (the
// device-plugin socket directory, the log symlinks, the shims' sockets): removed at teardown
// when the cluster made them; when they were there before, only what the cluster added in
// them (down to insideDepth) is.
var outside = []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/run/containerd",
	"/var/lib/containerd", "/opt/containerd", "/etc/cni", "/var/lib/cni", "/run/netns", "/etc/kubernetes", "/var/run/kubernetes",
	"/usr/libexec/kubernetes"}

// emptied are directories other programs share (libmount's utab directory, which the
// kubelet's mounts create): removed at teardown only when the cluster made them and they are empty.
var emptied = []string{"/run/mount"}

// snapshot is what the machine held before the cluster started.
type snapshot struct {
	dir     string
	outside map[string]bool // path -> existed
	inside  map[string]bool // what the outside paths that existed held
	cgroups map[string]bool
}

// insideDepth is how deep below an outside path that existed the snapshot looks: the cluster
// adds a shim's socket, /run/containerd/s/ID, and the kubelet's, device-plugins/kubelet.sock.
const insideDepth = 3

func takeSnapshot(dir string) snapshot {
	s := snapshot{dir: dir, outside: map[string]bool{}, inside: map[string]bool{}, cgroups: map[string]bool{}}
	for _, p := range append(outside, emptied...) {
		_, err := os.Lstat(p)
		s.outside[p] = err == nil
	}
	for _, p := range outside {
		for _, q := range below(p) {
			s.inside[q] = true
		}
	}
	for _, cg := range cgroupDirs() {
		s.cgroups[cg] = true
	}
	return s
}

// Stop tears the cluster down: the daemons in reverse order (the apiserver before etcd, or it
// hangs in shutdown), the containers and their shims, the mounts under Dir, the cgroups the
// Pods had, the paths outside Dir the cluster made, and Dir.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.teardown() })
	return c.stopErr
}

func (c *Cluster) teardown() error {
	var errs []error
	c.killContainers()
	for i := len(c.daemons) - 1; i >= 0; i-- {
		if err := c.daemons[i].stop(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	killMatching(c.Dir) // the shims containerd started (setsid: not in its group)
	errs = append(errs, c.removeCgroups()...)
	if err := unmountUnder(c.Dir); err != nil {
		errs = append(errs, err)
	}
	for _, p := range c.madeOutside() {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range emptied {
		if !c.before.outside[p] {
			_ = os.Remove(p) // fails, as it should, when another program has a file there
		}
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", c.Dir, err))
	}
	return errors.Join(errs...)
}

// killContainers stops the kubelet from restarting anything, then kills every container
// containerd runs for it.
func (c *Cluster) killContainers() {
	for _, d := range c.daemons {
		if d.name == "kubelet" || d.name == "kube-controller-manager" {
			_ = d.stop(15 * time.Second)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, id := range c.ctd.tasks(ctx, false) {
		_ = c.ctd.run(ctx, "tasks", "kill", "--all", "--signal", "SIGKILL", id)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && len(c.ctd.tasks(ctx, true)) > 0; {
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range c.ctd.tasks(ctx, false) {
		_ = c.ctd.run(ctx, "tasks", "delete", "--force", id)
	}
}

// tasks lists containerd's tasks (running: only those still running).
func (c ctrClient) tasks(ctx context.Context, running bool) []string {
	out, err := c.output(ctx, "tasks", "ls")
	if err != nil {
		return nil
	}
	var ids []string
	for i, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 3 || (running && f[2] != "RUNNING") {
			continue
		}
		ids = append(ids, f[0])
	}
	return ids
}

// killMatching SIGKILLs every process whose command line names dir.
func killMatching(dir string) {
	for _, pid := range pidsMatching(dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(pidsMatching(dir)) > 0; {
		time.Sleep(50 * time.Millisecond)
	}
}

// removeCgroups kills what is left in the Pods' cgroups made since the snapshot, then removes
// them, the deepest first. Other cgroups made meanwhile belong to other programs: left alone.
func (c *Cluster) removeCgroups() []error {
	var fresh []string
	for _, cg := range cgroupDirs() {
		if !c.before.cgroups[cg] && podCgroup(cg) {
			fresh = append(fresh, cg)
		}
	}
	slices.SortFunc(fresh, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	var errs []error
	for _, cg := range fresh {
		var err error
		for try := 0; try < 50; try++ {
			for _, pid := range cgroupPids(cg) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if err = syscall.Rmdir(cg); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", cg, err))
		}
	}
	return errs
}

// unmountUnder unmounts every mount below dir, the deepest first.
func unmountUnder(dir string) error {
	var errs []error
	for _, m := range mountsUnder(dir) {
		if err := syscall.Unmount(m, 0); err != nil {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
				errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
			}
		}
	}
	return errors.Join(errs...)
}

// cgroupRoot is where the cgroup v1 controllers (and the v2 "unified" tree) are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupDirs lists every cgroup directory on the machine.
func cgroupDirs() []string {
	var dirs []string
	ctrls, _ := os.ReadDir(cgroupRoot)
	for _, ctrl := range ctrls {
		if !ctrl.IsDir() || ctrl.Type()&os.ModeSymlink != 0 {
			continue
		}
		root := filepath.Join(cgroupRoot, ctrl.Name())
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && p != root {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	return dirs
}

// below lists what is under p, down to insideDepth, parents before children.
func below(p string) []string {
	var out []string
	_ = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err != nil || q == p {
			return nil
		}
		out = append(out, q)
		if d.IsDir() && strings.Count(strings.TrimPrefix(q, p), "/") >= insideDepth {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// madeOutside lists what the cluster made outside its directory: each outside path that was
// not there before, and in those that were, what is new (the topmost new path of each branch).
func (c *Cluster) madeOutside() []string {
	var made []string
	for _, p := range outside {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if !c.before.outside[p] {
			made = append(made, p)
			continue
		}
		for _, q := range below(p) {
			if c.before.inside[q] || slices.ContainsFunc(made, func(m string) bool { return strings.HasPrefix(q, m+"/") }) {
				continue
			}
			made = append(made, q)
		}
	}
	return made
}
