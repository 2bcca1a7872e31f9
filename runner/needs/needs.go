// Package needs is the book of needs that the GPU admitter (runner/admit) and the host
// memory admitter (runner/hostadmit) share: what each trial needs (declared; learned from
// its group's first trial; raised after it ran out of memory, its own or a sibling's),
// which trial learns its group's need, how a need grows after a trial ran out of memory and
// when such a trial was a neighbour's victim instead, and how a learned or raised need
// settles to the trial's own peak. The rules are written once; what differs between the
// resources is a Policy each admitter passes in. Both admitters take its one Request, and
// measure by its Loop and wake the trials that wait through its Changed (loop.go).
//
// The book measures nothing and places nothing. The admitter tells it what each trial
// holds (Trial.Grew), asks it what a trial needs (Need) and what a trial that ran out of
// memory needs next (Requeue), and guards it with its own lock: a Book is not safe for
// concurrent use.
package needs

import (
	"fmt"

	"github.com/runall/runall/size"
)

// Request is what one trial asks of a resource.
type Request struct {
	ID     int    // the trial's; a need raised after it ran out of memory is kept per ID
	Name   string // for messages
	Group  string // Auto learns one need per group (the task's Group)
	Memory uint64 // bytes (per device, for GPUs); 0 with Auto
	Auto   bool   // learn the need from the group's first trial
}

// History keeps learned needs across runs: read when a group's trial asks, written when one
// is learned.
type History interface {
	Learned(group string) (uint64, bool)
	SetLearned(group, name string, need uint64)
}

// Policy is what the book takes from the resource it serves; every rule besides is one for
// both. runner/admit's and runner/hostadmit's policies are their GPUPolicy and HostPolicy.
type Policy struct {
	// Resource names the memory in reasons and errors: "GPU memory", "host memory".
	Resource string
	// RanOut is how the end of a trial that ran out of it is told: "out of GPU memory",
	// "killed by the OOM killer".
	RanOut string
	// Measured says, with a %s for its size, what a requeue measured: what the trial held
	// and tried to allocate (GPU: "it needed at least %s"), or what it held when the kernel
	// killed it (host: "it held %s when killed").
	Measured string
	// Step is what a requeued need is rounded up to: the grain the resource is used in.
	Step uint64
	// GrowPercent is what an under-declared trial's measured need is multiplied by for its
	// next need, in percent (never less than twice the need it had): how far beyond what
	// was measured the trial is likely to go.
	GrowPercent uint64
	// OOMRetries is how often a trial may be requeued after running out (config oom-retries).
	OOMRetries int
}

// Book keeps the needs of one resource's trials. See the package doc for what it decides.
type Book struct {
	policy      Policy
	hist        History
	raised      map[int]uint64      // trial ID → need raised after it ran out of memory
	groupRaised map[string]uint64   // group → need a sibling's running out showed
	requeues    map[int]int         // trial ID → times requeued after running out
	victims     map[int]int         // trial ID → of those, times it had stayed within its need
	learning    map[string]*Trial   // group → the trial that learns its need
	trials      map[*Trial]struct{} // admitted and not ended: settled as they stop growing
}

// New returns an empty book; learned needs are read from and written to hist (nil: they
// live as long as the book).
func New(p Policy, hist History) *Book {
	if hist == nil {
		hist = memHistory{}
	}
	return &Book{policy: p, hist: hist, raised: map[int]uint64{}, groupRaised: map[string]uint64{},
		requeues: map[int]int{}, victims: map[int]int{}, learning: map[string]*Trial{}, trials: map[*Trial]struct{}{}}
}

// memHistory keeps learned needs for the book's life alone.
type memHistory map[string]uint64

func (m memHistory) Learned(group string) (uint64, bool) { n, ok := m[group]; return n, ok }

func (m memHistory) SetLearned(group, _ string, need uint64) { m[group] = need }

// Need is what req needs now, whether it is the trial that learns its group's need, or
// why it must wait: a need raised after it ran out of memory; else its declared need, or
// its group's learned one, and no less than a sibling's running out showed.
func (b *Book) Need(req Request) (need uint64, learning bool, wait string) {
	if n, ok := b.raised[req.ID]; ok {
		return n, false, ""
	}
	if !req.Auto {
		return max(req.Memory, b.groupRaised[req.Group]), false, ""
	}
	if n, ok := b.hist.Learned(req.Group); ok {
		return max(n, b.groupRaised[req.Group]), false, ""
	}
	if t, ok := b.learning[req.Group]; ok {
		return 0, false, fmt.Sprintf("waits for %q to measure the group's %s", t.req.Name, b.policy.Resource)
	}
	return 0, true, ""
}

// Admit records req admitted with need (Need's), the learner of its group when learning.
func (b *Book) Admit(req Request, need uint64, learning bool) *Trial {
	t := &Trial{req: req, need: need, reserve: need, learning: learning, raised: b.raisedFor(req)}
	if learning {
		b.learning[req.Group] = t
	}
	b.trials[t] = struct{}{}
	return t
}

// raisedFor reports whether req is admitted on a need runall raised after running out of
// memory, its own or a sibling's, rather than on the one it declared or learned.
func (b *Book) raisedFor(req Request) bool {
	if _, ok := b.raised[req.ID]; ok {
		return true
	}
	return !req.Auto && b.groupRaised[req.Group] > req.Memory
}

// End records t's end: a learner that ended before its memory settled teaches its group
// its peak so far. One that held nothing teaches nothing: the group's next trial learns
// instead.
func (b *Book) End(t *Trial) {
	delete(b.trials, t)
	if !t.learning || b.learning[t.req.Group] != t {
		return
	}
	if t.peak > 0 {
		b.learn(t)
		return
	}
	delete(b.learning, t.req.Group)
}

// LearnedNeed is the need a measured peak teaches: the peak and 5%, in 64 MiB steps, since
// sampling can miss a short spike.
func LearnedNeed(peak uint64) uint64 { return roundUp(peak+peak/20, 64<<20) }

func roundUp(n, step uint64) uint64 { return (n + step - 1) / step * step }

// learn fixes a group's need from its learning trial's peak; the trial keeps running, now
// reserving what it taught.
func (b *Book) learn(t *Trial) {
	need := LearnedNeed(t.peak)
	b.hist.SetLearned(t.req.Group, t.req.Name, need)
	delete(b.learning, t.req.Group)
	t.learning = false
	t.reserve, t.settled = need, need
}

// Final is the need t's trial ends with, for its results: the one it was admitted with; or,
// where it learned its group's need or ran on a need runall raised, its own peak plus the
// margin (settled once its memory stopped growing, or as measured so far); where its peak
// is not its own figure, the larger of its raised need and that.
func (b *Book) Final(t *Trial) uint64 {
	switch {
	case t.settled > 0:
		return t.settled
	case (t.learning || t.raised) && t.peak > 0 && t.peakOwn:
		return LearnedNeed(t.peak)
	case t.raised:
		// Its peak is a share of its device's growth, no figure of its own: it may be more
		// than its use or less. Report the larger, so that a need is never less than it used.
		return max(t.need, LearnedNeed(t.peak))
	}
	return t.need
}

func formatSize(n uint64) string { return size.Format(n) }
