package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes processes that tasks leave behind (a `cmd &` that outlives its
// shell, a double fork) runall's children when their parent exits, so that runall can find
// them and stop them at the end: no process of a task survives runall.
func BecomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// StopOrphans stops and reaps every remaining child of runall: task processes left behind.
// It is called once no task runs, so no exec.Cmd is waiting for any of them.
func StopOrphans(grace time.Duration) {
	kids := children()
	if len(kids) == 0 {
		return
	}
	for _, pid := range kids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		reapExited()
		if len(children()) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range children() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	time.Sleep(20 * time.Millisecond)
	reapExited()
}

// reapExited collects exited children without blocking.
func reapExited() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// ReapZombies collects orphans that exited while the run goes on: runall is their parent as
// the subreaper (or as PID 1 in a container), and nobody else will wait for them. Direct
// children of tasks are left to exec's Wait: procs holds their process group ids (a task's
// shell leads its own group), and its lock keeps a starting task from being reaped before
// it is registered.
func ReapZombies(procs *Table) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	for _, pid := range zombieChildren() {
		if procs.groups[pid] {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

// children lists the live (not zombie) processes whose parent is runall, from /proc.
func children() []int { return childrenIn(false) }

func zombieChildren() []int { return childrenIn(true) }

func childrenIn(zombies bool) []int {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || (f[0] == "Z") != zombies {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == self {
			pids = append(pids, pid)
		}
	}
	return pids
}
