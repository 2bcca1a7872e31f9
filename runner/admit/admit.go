// Package admit decides which GPU trial may start where, from measured free memory.
//
// On each device the admitter keeps the trials placed there and a baseline: the memory in
// use when none of runall's trials ran on it. Trials that have started but not yet allocated
// their need hold a reservation:
//
//	reserved = max(0, Σ need of runall's trials on the device − (used − baseline))
//
// so that trials launched within a second of each other never count the same free memory
// twice, and a reservation lasts until the device's measured use shows the memory. A trial
// fits where  free − reserved − margin ≥ need, and goes where it fits best. Memory used by
// anything else (another container, a notebook) counts, because "free" is measured.
//
// Memory that ended trials are still giving back counts as used until it is seen freed
// (drain.go), and the margin (the larger of bytes and a fraction of a device's total) is
// kept free on every device.
//
// A need comes from the book of needs (runner/needs, with GPUPolicy): declared, learned by
// the first trial of a group (with a provisional reservation beside other trials where each
// trial's processes can be told apart, else alone on its devices: learn.go), or raised
// after a trial ran out of memory. Of the devices that fit, a device closed for a while
// (Closed: its MPS server restarts after a fault) takes no trial, and a request's Gate
// (gpu-sharing: progress, runner/sharing) may hold the trial back with its own reason. The
// Admitter holds its parts under one lock, none embedded: the meter (meter.go, attrib.go),
// the book, the devices (device.go, drain.go) and the closed devices (closed.go); it samples
// the devices on a loop of its own (sample.go).
//
// The package knows trials only as requests (an id, a name, a group, a need, a number of
// devices, a gate); it knows nothing of the plan or of the scheduler that asks. Of the
// processes that run them it knows their process groups, told as each starts (Started),
// and each GPU process's group and ancestors as /proc says them (runner/proc's Lineage), to
// tell whose memory is whose (attrib.go); it starts none.
package admit

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/needs"
	"github.com/runall/runall/runner/proc"
	"github.com/runall/runall/size"
)

// Request is what one trial asks of the GPUs.
type Request struct {
	needs.Request     // the trial, and its need: bytes per device, or auto with its group
	Devices       int // how many devices (0 means 1)
	// Gate, when set, says whether a device that has the memory takes the trial now, and
	// why not (gpu-sharing: progress, runner/sharing); it is called with the admitter's lock
	// held and must not call back into it. nil: every device with the memory does.
	Gate func(dev int) (ok bool, why string)
}

// Placement is a trial's place on one or more devices, from Place to Release.
type Placement struct {
	Devices []int    // device indices
	UUIDs   []string // the same devices, as a trial's CUDA_VISIBLE_DEVICES names them
	Need    uint64   // bytes per device it was admitted with; 0 when it learns its group's
	Total   uint64   // the smallest total memory among its devices

	req       Request
	entry     *needs.Trial   // the book's: what it reserves (its need, learned, raised or settled), its peak
	exclusive bool           // while it learns: alone on its devices, where per-trial figures are not to be had
	usage     map[int]uint64 // device → what it holds there now
	held      map[int]uint64 // device → what it was last seen holding there, kept after its processes exit
	tie       tie            // how its processes are told from others' (attrib.go)
}

// tie is what ties a placement's trial to its processes on its devices.
type tie struct {
	roots      []int     // the process groups of its attempts' shells
	launchedAt time.Time // its latest launch (placement, then each attempt)
	lastTie    time.Time // when a process was last tied to it
	ambiguous  bool      // a process on its device could not be told from another trial's
}

// Options configures an Admitter.
type Options struct {
	Probe      gpu.Probe
	Margin     Margin        // kept free on every device
	OOMRetries int           // how often a trial may be requeued after running out of memory
	History    needs.History // learned needs: read, and written when learned; nil keeps them in memory
	// Lineage finds a process's group and ancestors (nil: proc.LineageOf, from /proc).
	Lineage func(pid int) (proc.Lineage, bool)
	Now     func() time.Time // nil: time.Now
	Closed  *Closed          // devices closed to new trials for a while (nil: none)
	// Busy has each Sample tell each trial's share of its devices' time (Sample.Busy), where
	// the driver reports utilisation per process: gpu-sharing: progress places by it.
	Busy bool
}

// Admitter places GPU trials. Its methods are safe for concurrent use.
//
// It holds three parts under one lock and decides where a trial goes: the meter measures
// the devices and ties the processes on them to trials (meter.go, attrib.go); the book of
// needs (runner/needs, with GPUPolicy) keeps what trials need, learned and raised; the
// devices keep each device's placements and memory arithmetic (device.go, drain.go).
type Admitter struct {
	mu     sync.Mutex
	margin Margin // kept free on every device
	meter  *meter
	book   *needs.Book
	devs   *devices
	closed *Closed // devices closed for a while (closed.go)
}

// GPUPolicy is the book of needs' policy for GPU memory. A requeued need is rounded up to
// 256 MiB: frameworks' caching allocators take GPU memory in large blocks, a device holds
// tens of GiB, and a finer step would send a trial back for a few MiB more. What a requeue
// measured is what the trial held and the allocation that failed, as its processes or its
// error message tell; the next need is twice that, since an allocator that failed one
// block asks for larger ones as it goes on.
func GPUPolicy(oomRetries int) needs.Policy {
	return needs.Policy{Resource: "GPU memory", RanOut: "out of GPU memory", Measured: "it needed at least %s",
		Step: 256 << 20, GrowPercent: 200, OOMRetries: oomRetries}
}

// sampleEvery is how often the devices are measured while GPU trials run.
const sampleEvery = 250 * time.Millisecond

// tieSampleEvery is how often they are measured while a launch waits to be tied to its
// processes and holds its device back (attrib.go).
const tieSampleEvery = 50 * time.Millisecond

// New returns an admitter over o.Probe's devices.
func New(o Options) *Admitter {
	if o.Lineage == nil {
		o.Lineage = proc.LineageOf
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	a := &Admitter{
		margin: o.Margin,
		meter:  &meter{probe: o.Probe, lineage: o.Lineage, now: o.Now, busy: o.Busy},
		book:   needs.New(GPUPolicy(o.OOMRetries), o.History),
		devs:   &devices{},
		closed: o.Closed,
	}
	if o.Closed != nil {
		o.Closed.wake = func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.meter.wake()
		}
	}
	return a
}

// ErrNeverFits is wrapped by Place's error for a trial no device here can ever hold.
var ErrNeverFits = errors.New("needs more GPU memory than any device has")

// Place finds devices for req now. It returns a placement; or nil and why the trial waits;
// or an error when it can never run here.
func (a *Admitter) Place(req Request) (*Placement, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.meter
	if m.now().Sub(m.snapAt) > 100*time.Millisecond {
		a.sampleLocked()
	}
	if m.snap == nil {
		return nil, "", fmt.Errorf("cannot measure GPU memory: %w", m.snapErr)
	}
	want := max(req.Devices, 1)
	if want > len(m.snap) {
		return nil, "", fmt.Errorf("asks for %d GPUs, %d are visible", want, len(m.snap))
	}
	need, learning, wait := a.book.Need(req.Request)
	if wait != "" {
		return nil, wait, nil
	}
	if err := fitsSomewhere(m.snap, a.margin, need); err != nil {
		return nil, "", err
	}
	cands, tying, why := a.candidatesLocked(need, learning)
	if allowed, refused := gated(cands, req.Gate); len(allowed) < want && len(cands) >= want {
		return nil, refused, nil // the memory is there: the gate holds the trial back
	} else {
		cands = allowed
	}
	if len(cands) < want && len(cands)+tying >= want && !learning {
		// Room enough, held only while a just-started trial is tied to its processes: one
		// plain reason, the same for every trial that waits on it (the outputs say it once),
		// not a line per trial that reads as a refusal on an empty card.
		return nil, TieWait, nil
	}
	if len(cands) < want {
		head := "needs " + size.Format(need)
		if want > 1 {
			head += fmt.Sprintf(" on each of %d GPUs", want)
		}
		if learning {
			head = "learning its GPU memory: needs a GPU with no other trial"
		}
		return nil, head + "; " + why, nil
	}
	p := &Placement{req: req, Need: need, entry: a.book.Admit(req.Request, need, learning),
		usage: map[int]uint64{}, held: map[int]uint64{}, tie: tie{launchedAt: m.now()}}
	for _, dev := range BestFit(cands, want) {
		p.Devices = append(p.Devices, dev)
		p.UUIDs = append(p.UUIDs, m.snap[dev].UUID)
		if total := m.snap[dev].Total; p.Total == 0 || total < p.Total {
			p.Total = total
		}
		a.devs.list[dev].trials = append(a.devs.list[dev].trials, p)
	}
	if learning {
		a.provisionLocked(p)
	}
	return p, "", nil
}

// TieWait is why a trial waits while the GPUs it has room on each hold a trial that just
// started, until runall has seen which processes are that trial's (their PIDs are not
// visible here, or no trial's process was seen yet: docs/gpu.md).
const TieWait = "a moment: the GPUs with room hold a trial that just started, until runall sees which processes are its own"

// Release frees a placement when its trial ends.
func (a *Admitter) Release(p *Placement) {
	a.mu.Lock()
	defer a.mu.Unlock()
	// Measure now: the trial's last peak, and the memory its end gave back, which the
	// trials waiting for room are told of (Changed) at once.
	a.sampleLocked()
	a.book.End(p.entry)
	now := a.meter.now()
	for _, d := range p.Devices {
		a.devs.list[d].remove(p, d, a.meter.snap[d].Used, a.meter.exact, now)
	}
	a.meter.wake()
}

// Changed returns a channel closed when what Place sees may have changed: after the next
// measurement of the devices, or a release. A waiting trial tries again then, rather than
// on a timer of its own.
func (a *Admitter) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.meter.waiting()
}

// Started tells the admitter that one of p's attempts started, its shell leading process
// group pgid: the processes it starts are p's.
func (a *Admitter) Started(p *Placement, pgid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p.tie.roots = append(p.tie.roots, pgid)
	p.tie.launchedAt = a.meter.now()
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// DeviceEnv is what the probe says a trial on p's devices needs (CUDA_VISIBLE_DEVICES, and
// for simulated GPUs where their state is).
func (a *Admitter) DeviceEnv(p *Placement) []string { return a.meter.probe.Env(p.Devices) }
