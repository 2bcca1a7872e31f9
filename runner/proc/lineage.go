package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Lineage is where a process stands in runall's tree of processes: its process group and
// its ancestors, nearest first. A task's shell leads its own process group, so what a task
// starts is found by its group, or by its ancestry when it left the group (setsid).
type Lineage struct {
	PGID      int
	Ancestors []int // parent, grandparent, ... up to the first process or the first unreadable
}

// LineageOf reads pid's lineage from /proc; ok is false when pid names no process here.
func LineageOf(pid int) (Lineage, bool) { return lineageIn("/proc", pid) }

func lineageIn(root string, pid int) (l Lineage, ok bool) {
	ppid, pgid, ok := readStat(root, pid)
	if !ok {
		return Lineage{}, false
	}
	l.PGID = pgid
	for seen := 0; ppid > 1 && seen < 64; seen++ { // 64: a cycle in a torn read stops here
		l.Ancestors = append(l.Ancestors, ppid)
		if ppid, _, ok = readStat(root, ppid); !ok {
			break
		}
	}
	return l, true
}

// Has reports whether the process is in group pgid or descends from process root.
func (l Lineage) Has(root int) bool {
	if l.PGID == root {
		return true
	}
	for _, a := range l.Ancestors {
		if a == root {
			return true
		}
	}
	return false
}

// readStat reads the parent and process group of pid from <root>/<pid>/stat.
func readStat(root string, pid int) (ppid, pgid int, ok bool) {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	return ppid, pgid, err1 == nil && err2 == nil
}
