// Package hostmem reads the host memory runall's container may use: its memory cgroup's
// limit, what is in use under it and how often the kernel's OOM killer struck there (cgroup
// v2 or v1), or the machine's memory where no limit applies; and what a tree of processes
// holds (PSS, or RSS). It knows nothing of tasks, trials or GPUs.
package hostmem

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Memory is the container's memory at one moment, in bytes.
type Memory struct {
	// Limit is what the container may use: its cgroup's limit, or the machine's total
	// memory where no limit applies (Limited false) or the limit is larger.
	Limit   uint64
	Limited bool
	// Used is what is charged to the container less the page cache the kernel reclaims
	// first (the inactive file pages): the figure the kubelet evicts by and kubectl top
	// shows as the working set. Without a limit, it is the machine's total less MemAvailable.
	Used uint64
	// Cache is the reclaimable page cache left out of Used.
	Cache uint64
	// Available is the machine's MemAvailable (0: unknown): a node short of memory bounds
	// the room too, whatever the container's limit.
	Available uint64
	// OOMKills counts the processes the kernel's OOM killer took in the cgroup since it was
	// made (cgroup v2 memory.events, v1 memory.oom_control); HasOOMKills says whether the
	// kernel keeps that counter here.
	OOMKills    uint64
	HasOOMKills bool
	// LimitHits is cgroup v1's memory.failcnt: how often a charge hit the limit (and the
	// kernel reclaimed). Not a kill count; 0 elsewhere.
	LimitHits uint64
}

// Room is what more the container can take now: the limit less what is used, and no more
// than the machine has available.
func (m Memory) Room() uint64 {
	room := sub(m.Limit, m.Used)
	if m.Available > 0 {
		room = min(room, m.Available)
	}
	return room
}

// Kind is where a Probe reads the memory from.
type Kind int

const (
	// Meminfo: no memory cgroup applies; the machine's /proc/meminfo.
	Meminfo Kind = iota
	// CgroupV1: the memory controller of a cgroup v1 hierarchy.
	CgroupV1
	// CgroupV2: the unified hierarchy.
	CgroupV2
)

func (k Kind) String() string {
	switch k {
	case CgroupV1:
		return "cgroup v1"
	case CgroupV2:
		return "cgroup v2"
	}
	return "meminfo"
}

// Probe reads one container's memory. Its methods are safe for concurrent use: each Read
// reads the files afresh.
type Probe struct {
	kind    Kind
	dir     string // the cgroup's directory (Meminfo: "")
	top     string // cgroup v2: the mount's root, the last ancestor whose memory.max counts
	meminfo string // the machine's meminfo file
}

// Kind says whether memory is read from a cgroup, and which version.
func (p *Probe) Kind() Kind { return p.kind }

// Dir is the cgroup's directory; "" for Meminfo.
func (p *Probe) Dir() string { return p.dir }

// String names the source for messages: "cgroup v2 /sys/fs/cgroup", "/proc/meminfo".
func (p *Probe) String() string {
	if p.kind == Meminfo {
		return p.meminfo
	}
	return p.kind.String() + " " + p.dir
}

// NewCgroupV1 reads the cgroup v1 memory cgroup at dir; meminfo is the machine's
// /proc/meminfo ("" leaves the machine's memory unknown).
func NewCgroupV1(dir, meminfo string) *Probe {
	return &Probe{kind: CgroupV1, dir: dir, meminfo: meminfo}
}

// NewCgroupV2 reads the cgroup v2 cgroup at dir, taking the smallest memory.max of it and of
// its ancestors up to top (the hierarchy's mount point; "" or dir: dir alone).
func NewCgroupV2(dir, top, meminfo string) *Probe {
	return &Probe{kind: CgroupV2, dir: dir, top: top, meminfo: meminfo}
}

// NewMeminfo reads the machine's memory from a /proc/meminfo file: no limit applies.
func NewMeminfo(path string) *Probe { return &Probe{kind: Meminfo, meminfo: path} }

// ErrUnreadable is wrapped by Read's error when the files hold no figure it can use.
var ErrUnreadable = errors.New("cannot read the container's memory")

// Read measures the memory now.
func (p *Probe) Read() (Memory, error) {
	var m Memory
	var err error
	info, infoErr := readMeminfo(p.meminfo)
	switch p.kind {
	case CgroupV1:
		m, err = readV1(p.dir)
	case CgroupV2:
		m, err = readV2(p.dir, p.top)
	default:
		if infoErr != nil {
			return Memory{}, fmt.Errorf("%w: %w", ErrUnreadable, infoErr)
		}
		return info.memory(), nil
	}
	if err != nil {
		return Memory{}, fmt.Errorf("%w from %s: %w", ErrUnreadable, p, err)
	}
	if infoErr == nil {
		m.Available = info.available
		// A limit beyond the machine's memory is no limit: the machine's memory is.
		if !m.Limited || m.Limit >= info.total {
			m.Limit, m.Limited = info.total, false
		}
	}
	if !m.Limited && infoErr != nil {
		return Memory{}, fmt.Errorf("%w: %s sets no limit, and %w", ErrUnreadable, p, infoErr)
	}
	return m, nil
}

// OOMKills reads Read's OOMKills and HasOOMKills alone: one small file instead of Read's
// five or six, cheap enough for every attempt's start and end (the counter rising while an
// attempt ran tells an OOM kill from another SIGKILL). ok is false without a memory cgroup
// or where the kernel keeps no counter.
func (p *Probe) OOMKills() (n uint64, ok bool) {
	switch p.kind {
	case CgroupV1:
		return readOOMKills(filepath.Join(p.dir, "memory.oom_control"))
	case CgroupV2:
		return readOOMKills(filepath.Join(p.dir, "memory.events"))
	}
	return 0, false
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
