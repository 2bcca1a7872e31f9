package hostmem

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Footprint is what a set of processes holds in host memory, in bytes.
type Footprint struct {
	// PSS shares each page among the processes that map it (a forked data loader's
	// copy-on-write pages count once in all); RSS counts them in each. PSS is 0 where
	// smaps_rollup cannot be read (kernels before 4.14, another user's process): use RSS.
	PSS, RSS uint64
	Procs    int // how many processes were measured
}

// Bytes is the best figure there is: PSS where it was read, else RSS.
func (f Footprint) Bytes() uint64 {
	if f.PSS > 0 {
		return f.PSS
	}
	return f.RSS
}

func (f *Footprint) add(g Footprint) {
	f.PSS += g.PSS
	f.RSS += g.RSS
	f.Procs += g.Procs
}

// Trees measures the processes of each root: the processes of the process group root
// leads, and those that descend from process root but left its group (setsid). procRoot is
// procfs ("": /proc). A root whose processes are all gone maps to a zero Footprint.
func Trees(procRoot string, roots []int) map[int]Footprint {
	if procRoot == "" {
		procRoot = "/proc"
	}
	out := make(map[int]Footprint, len(roots))
	if len(roots) == 0 {
		return out
	}
	want := make(map[int]bool, len(roots))
	for _, r := range roots {
		want[r] = true
		out[r] = Footprint{}
	}
	procs := listProcs(procRoot)
	for pid, st := range procs {
		root, ok := rootOf(pid, st, procs, want)
		if !ok {
			continue
		}
		if f, ok := readFootprint(procRoot, pid); ok {
			cur := out[root]
			cur.add(f)
			out[root] = cur
		}
	}
	return out
}

// rootOf is the root a process belongs to: the group it is in, or the nearest ancestor
// that is a root. 64 steps at most: a torn read could make a cycle.
func rootOf(pid int, st procStat, procs map[int]procStat, want map[int]bool) (int, bool) {
	if want[st.pgid] {
		return st.pgid, true
	}
	for i, p := 0, pid; i < 64; i++ {
		if want[p] {
			return p, true
		}
		s, ok := procs[p]
		if !ok || s.ppid <= 1 {
			return 0, false
		}
		p = s.ppid
	}
	return 0, false
}

// procStat is what runall reads of a process's stat.
type procStat struct{ ppid, pgid int }

// listProcs reads the parent and group of every process procfs shows.
func listProcs(procRoot string) map[int]procStat {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	out := make(map[int]procStat, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(procRoot, pid); ok {
			out[pid] = st
		}
	}
	return out
}

// readStat reads <procRoot>/<pid>/stat: "pid (comm) state ppid pgrp ...", where comm may
// hold spaces and parentheses.
func readStat(procRoot string, pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	return procStat{ppid: ppid, pgid: pgid}, err1 == nil && err2 == nil
}

// readFootprint reads one process's PSS and RSS from smaps_rollup, or its RSS from status
// where smaps_rollup cannot be read. A zombie or kernel thread holds nothing.
func readFootprint(procRoot string, pid int) (Footprint, bool) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	if kv, err := readKeyed(filepath.Join(dir, "smaps_rollup"), ":"); err == nil && len(kv) > 0 {
		return Footprint{PSS: kv["Pss"] << 10, RSS: kv["Rss"] << 10, Procs: 1}, true
	}
	kv, err := readKeyed(filepath.Join(dir, "status"), ":")
	if err != nil {
		return Footprint{}, false
	}
	return Footprint{RSS: kv["VmRSS"] << 10, Procs: 1}, true
}
