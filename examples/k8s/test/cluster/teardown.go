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
// when the cluster made them, left alone when they were there before.
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
	cgroups map[string]bool
}

func takeSnapshot(dir string) snapshot {
	s := snapshot{dir: dir, outside: map[string]bool{}, cgroups: map[string]bool{}}
	for _, p := range append(outside, emptied...) {
		_, err := os.Lstat(p)
		s.outside[p] = err == nil
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
	for _, p := range outside {
		if !c.before.outside[p] {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
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
	for _, id := range c.taskIDs(ctx) {
		_ = c.ctr(ctx, "tasks", "kill", "--all", "--signal", "SIGKILL", id)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && len(c.runningTasks(ctx)) > 0; {
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range c.taskIDs(ctx) {
		_ = c.ctr(ctx, "tasks", "delete", "--force", id)
	}
}

// taskIDs lists containerd's tasks; runningTasks those still running.
func (c *Cluster) taskIDs(ctx context.Context) []string { return c.tasks(ctx, false) }

func (c *Cluster) runningTasks(ctx context.Context) []string { return c.tasks(ctx, true) }

func (c *Cluster) tasks(ctx context.Context, running bool) []string {
	out, err := c.ctrOutput(ctx, "tasks", "ls")
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
