package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Leftovers lists what a stopped cluster left on the machine: processes whose command line
// names its directory, mounts below it, the directory itself, cgroups of its Pods, paths
// outside it that it made. Empty after a clean teardown.
func (c *Cluster) Leftovers() []string {
	var left []string
	for _, pid := range pidsMatching(c.Dir) {
		left = append(left, fmt.Sprintf("process %d", pid))
	}
	for _, m := range mountsUnder(c.Dir) {
		left = append(left, "mount "+m)
	}
	if _, err := os.Lstat(c.Dir); err == nil {
		left = append(left, "directory "+c.Dir)
	}
	for _, cg := range cgroupDirs() {
		if !c.before.cgroups[cg] && podCgroup(cg) {
			left = append(left, "cgroup "+cg)
		}
	}
	for _, p := range c.madeOutside() {
		left = append(left, "path "+p)
	}
	return left
}

// podCgroup says whether a cgroup is one the kubelet or containerd makes for a Pod or a
// container (without QoS cgroups, containerd puts them under one named after its namespace,
// k8s.io): other cgroups that appear meanwhile belong to other programs on the machine.
func podCgroup(path string) bool {
	for _, part := range strings.Split(path, "/") {
		if part == "k8s.io" || strings.HasPrefix(part, "kubepods") || strings.HasPrefix(part, "pod") || isContainerID(part) {
			return true
		}
	}
	return false
}

func isContainerID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// pidsMatching lists the processes (not this one) whose command line contains s.
func pidsMatching(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgroupPids lists the processes in a cgroup.
func cgroupPids(cg string) []int {
	data, _ := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mountsUnder lists the mount points below dir, the deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var ms []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			ms = append(ms, fields[4])
		}
	}
	slices.SortFunc(ms, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(ms)
}

// PodLog is what a container of a Pod has written so far, read from the kubelet's log
// directory (CRI format: each line "TIME STREAM TAG text"), every restart in order; "" when
// there is none yet.
func (c *Cluster) PodLog(t testing.TB, namespace, pod, container string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.PodLogs, namespace+"_"+pod+"_*", container, "*.log"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.SplitAfter(string(data), "\n") {
			if parts := strings.SplitN(line, " ", 4); len(parts) == 4 {
				b.WriteString(parts[3])
			}
		}
	}
	return b.String()
}
