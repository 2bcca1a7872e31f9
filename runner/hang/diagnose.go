package hang

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// dumpWait is how long py-spy may take over one process.
const dumpWait = 10 * time.Second

// diagnose is what a hung trial's processes were doing as it was found: py-spy's dump of
// each where py-spy is on PATH (it says itself of a process that runs no Python), else the
// kernel's wait channel of each (/proc/PID/wchan). py-spy is no dependency: without it the
// wait channels are all there is.
func diagnose(pgids []int) string {
	pids := membersOf("/proc", pgids)
	if len(pids) == 0 {
		return "no process of it was left to look at"
	}
	spy, _ := exec.LookPath("py-spy")
	var b strings.Builder
	for _, pid := range pids {
		if spy != "" {
			fmt.Fprintf(&b, "py-spy dump --pid %d:\n%s\n", pid, pySpy(spy, pid))
			continue
		}
		wchan, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "wchan"))
		w := strings.TrimSpace(string(wchan))
		if err != nil || w == "" || w == "0" {
			w = "running (no wait channel)"
		}
		fmt.Fprintf(&b, "pid %d (%s) waits in %s\n", pid, comm(pid), w)
	}
	return strings.TrimRight(b.String(), "\n")
}

func pySpy(spy string, pid int) string {
	ctx, cancel := context.WithTimeout(context.Background(), dumpWait)
	defer cancel()
	out, err := exec.CommandContext(ctx, spy, "dump", "--pid", strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out)) + " (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

func comm(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}

// membersOf is the processes under root (a /proc) in any of the process groups pgids.
func membersOf(root string, pgids []int) []int {
	in := map[int]bool{}
	for _, g := range pgids {
		in[g] = true
	}
	entries, _ := os.ReadDir(root)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		rest := string(stat)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) >= 3 {
			if g, err := strconv.Atoi(f[2]); err == nil && in[g] {
				pids = append(pids, pid)
			}
		}
	}
	sort.Ints(pids)
	return pids
}
