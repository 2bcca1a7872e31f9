// Package hostadmit decides which trial may start now by the container's host memory, the
// second resource runall admits by beside GPU memory.
//
// The container has a limit (its memory cgroup's, or the machine's memory) and a use, both
// measured (hostmem). Each running trial's process tree is measured too, so that a trial
// that has started but not yet grown to its need holds a reservation of the rest:
//
//	reserved = Σ max(0, need − what its processes hold now)
//	room     = limit − used − margin − reserved
//
// A trial starts when its need fits in the room. A trial that needs more than the limit
// less the margin can never start. memory: auto learns a group's need from the peak of its
// first trial's processes, the rest of the group waiting meanwhile. When the kernel's OOM
// killer takes a trial (its process died of SIGKILL while the cgroup's oom_kill counter
// rose), the trial is requeued with a raised need, within oom-retries.
//
// The package knows trials only as requests (an id, a group, a need) and their processes as
// process groups; it knows nothing of the scheduler that asks, of task files, or of GPUs.
package hostadmit

import (
	"errors"
	"sync"
	"time"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/needs"
	"github.com/runall/runall/size"
)

// Request is what a trial asks of the container's memory: the book of needs' one Request
// (bytes, or auto with its group).
type Request = needs.Request

// HostPolicy is the book of needs' policy for host memory. A requeued need is rounded up to
// 64 MiB: a container's limit may be a few GiB, where a coarser step would be a large share
// of it. What a requeue measured is what the trial's processes held at the last sample
// before the kernel killed it: the kill leaves no message of what it tried to allocate.
// The next need is half as much again as that (at least twice the old need), not twice:
// the kernel kills as the container fills, while the trial still grows towards its need,
// so its peak is most of it, and twice it would let half as many trials share the
// container (bench/hostmem.py's under-declared sweep: a trial of 410 MiB killed at 280
// needs 576 MiB at 2x, so that two no longer fit in 1 GiB, and 448 MiB at 1.5x).
func HostPolicy(oomRetries int) needs.Policy {
	return needs.Policy{Resource: "host memory", RanOut: "killed by the OOM killer", Measured: "it held %s when killed",
		Step: 64 << 20, GrowPercent: 150, OOMRetries: oomRetries}
}

// Reader measures the container's memory: a *hostmem.Probe.
type Reader interface {
	Read() (hostmem.Memory, error)
}

// Options configures an Admitter.
type Options struct {
	Memory     Reader
	Margin     func(limit uint64) uint64 // kept free of the limit (nil: none)
	OOMRetries int                       // how often a trial may be requeued after an OOM kill
	Needs      needs.History             // nil: learned needs live as long as the admitter
	// Trees measures process trees by the process groups that lead them (nil: hostmem.Trees
	// over /proc).
	Trees func(roots []int) map[int]hostmem.Footprint
	Now   func() time.Time // nil: time.Now
}

// Placement is an admitted trial, from Place to Release.
type Placement struct {
	Need uint64 // bytes it was admitted with; 0 when it learns its group's, or admission is off

	req      Request
	entry    *needs.Trial // the book's: what it reserves (its need, learned, raised or settled), its peak
	roots    []int
	oomStart uint64 // the cgroup's OOM kill count when it started
	usage    uint64 // what its processes hold now (PSS, or RSS)
}

// Admitter admits trials by host memory. Its methods are safe for concurrent use. What
// decides a trial's need (declared, learned, raised after an OOM kill) is the book of needs
// (runner/needs, with HostPolicy); the admitter measures and reserves.
type Admitter struct {
	mem    Reader
	margin func(uint64) uint64
	trees  func([]int) map[int]hostmem.Footprint
	now    func() time.Time

	mu      sync.Mutex
	snap    measurement
	running []*Placement
	book    *needs.Book
	warned  bool          // Warning said why admission is off
	loop    needs.Loop    // Start's, until Stop
	changed needs.Changed // woken at the next measurement or release: see Changed
}

// measurement is the container's memory as last read, and the use over the last few
// seconds, for OOM messages.
type measurement struct {
	hostmem.Memory
	at     time.Time
	err    error
	recent []usedAt
}

type usedAt struct {
	at   time.Time
	used uint64
}

// New returns an admitter over o.Memory.
func New(o Options) *Admitter {
	if o.Margin == nil {
		o.Margin = func(uint64) uint64 { return 0 }
	}
	if o.Trees == nil {
		o.Trees = func(roots []int) map[int]hostmem.Footprint { return hostmem.Trees("", roots) }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Admitter{mem: o.Memory, margin: o.Margin, trees: o.Trees, now: o.Now, book: needs.New(HostPolicy(o.OOMRetries), o.Needs)}
}

// ErrNeverFits is wrapped by the error of a trial whose need the container's limit can
// never hold.
var ErrNeverFits = errors.New("needs more host memory than the container's limit")

// Place admits req now: it returns a placement; or nil and why the trial waits; or an error
// when it can never run here. Where the container's memory cannot be read, every trial is
// admitted (Warning says why once).
func (a *Admitter) Place(req Request) (*Placement, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.now().Sub(a.snap.at) > 100*time.Millisecond {
		a.sampleLocked()
	}
	if a.snap.err != nil {
		p := &Placement{req: req, entry: a.book.Admit(req, 0, false)}
		a.startLocked(p)
		return p, "", nil
	}
	need, learning, wait := a.book.Need(req)
	if wait != "" {
		return nil, wait, nil
	}
	margin := a.margin(a.snap.Limit)
	if most := a.snap.most(margin); need > most {
		return nil, "", a.snap.neverFits(need, margin)
	}
	reserve := need
	if learning {
		reserve = a.snap.provisional()
	}
	room, reserved := a.snap.room(margin, a.running)
	if reserve > room {
		head := "needs " + size.Format(need) + " of host memory"
		if learning {
			head = "learning its host memory: needs room for " + size.Format(reserve) + " to start"
		}
		return nil, head + "; " + a.snap.describe(room, reserved, margin), nil
	}
	p := &Placement{req: req, Need: need, entry: a.book.Admit(req, need, learning)}
	p.entry.Provision(reserve)
	a.startLocked(p)
	return p, "", nil
}

func (a *Admitter) startLocked(p *Placement) {
	p.oomStart = a.snap.OOMKills
	a.running = append(a.running, p)
}

// Started tells the admitter that one of p's attempts started, its shell leading process
// group pgid: the processes of that group, and those descending from its leader, are p's.
func (a *Admitter) Started(p *Placement, pgid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p.roots = append(p.roots, pgid)
}

// Release frees a placement when its trial ends, or when it was placed and never started.
//
// A placement whose trial never started (another resource refused it) frees only its
// reservation: nothing is measured and no waiting trial is woken, since the room it leaves
// is the room there was before it was placed. One whose trial ran is measured at once, so
// that the memory its end gave back is seen by the trials that wait (Changed).
func (a *Admitter) Release(p *Placement) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ran := len(p.roots) > 0
	if ran {
		a.sampleLocked()
	}
	a.book.End(p.entry)
	for i, q := range a.running {
		if q == p {
			a.running = append(a.running[:i], a.running[i+1:]...)
			break
		}
	}
	if ran {
		a.changedLocked()
	}
}

// Warning is, once, why admission by host memory is off: the container's memory cannot be
// read. "" when it can, or when it was said already.
func (a *Admitter) Warning() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.snap.at.IsZero() {
		a.sampleLocked()
	}
	if a.snap.err == nil || a.warned {
		return ""
	}
	a.warned = true
	return a.snap.err.Error() + ": trials are admitted without regard to host memory"
}

// Memory is the last measurement of the container's memory; ok is false when it cannot be
// read.
func (a *Admitter) Memory() (m hostmem.Memory, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.snap.Memory, a.snap.err == nil && !a.snap.at.IsZero()
}

// Peak is the most the placement's processes held at once.
func (a *Admitter) Peak(p *Placement) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return p.entry.Peak()
}

// Need is the need p's trial ends with, for its results: the one it was admitted with; or,
// where it learned its group's need or ran on a need raised after an OOM kill, its peak
// plus the margin (needs.Book.Final).
func (a *Admitter) Need(p *Placement) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.book.Final(p.entry)
}

// Changed returns a channel closed when what Place sees may have changed: after the next
// measurement, or a release.
func (a *Admitter) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed.Chan()
}

func (a *Admitter) changedLocked() { a.changed.Wake() }

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
