package proc

import (
	"sync"
	"syscall"
	"time"
)

// Table tracks the process groups of running tasks so that a signal reaches them all.
type Table struct {
	mu          sync.Mutex
	groups      map[int]bool
	closed      bool // no new process may start: they are killed on arrival
	oomScoreAdj int  // what every task's shell starts with: TaskOOMScoreAdj
}

// NewTable is an empty table; the tasks started through it start with TaskOOMScoreAdj.
func NewTable() *Table { return &Table{groups: map[int]bool{}, oomScoreAdj: TaskOOMScoreAdj()} }

// addLocked registers a task's process group; the caller holds p.mu. A group that starts
// after the run began stopping is told to stop at once.
func (p *Table) addLocked(pgid int) {
	p.groups[pgid] = true
	if p.closed {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
	}
}

func (p *Table) remove(pgid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.groups, pgid)
}

// Signal sends sig to every running group. With closed set, groups that start later get
// SIGTERM as they arrive.
func (p *Table) Signal(sig syscall.Signal, closed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = p.closed || closed
	for pgid := range p.groups {
		_ = syscall.Kill(-pgid, sig)
	}
}

// SignalBut sends sig to every running group but those spared says so, as Signal does.
func (p *Table) SignalBut(sig syscall.Signal, closed bool, spared func(pgid int) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = p.closed || closed
	for pgid := range p.groups {
		if !spared(pgid) {
			_ = syscall.Kill(-pgid, sig)
		}
	}
}

// Terminate stops one running group: SIGTERM, then SIGKILL after wait if it is still
// running. A group that already ended is left alone (its id may have been reused).
func (p *Table) Terminate(pgid int, wait time.Duration) {
	signal := func(sig syscall.Signal) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.groups[pgid] {
			_ = syscall.Kill(-pgid, sig)
		}
	}
	signal(syscall.SIGTERM)
	time.AfterFunc(wait, func() { signal(syscall.SIGKILL) })
}

// terminateGroup sends SIGTERM to a process group and SIGKILL after wait if it lives on.
func terminateGroup(pgid int, wait time.Duration) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	time.AfterFunc(wait, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
}
