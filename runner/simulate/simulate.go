package simulate

import (
	"container/heap"
	"fmt"
	"slices"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/order"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/size"
)

// Options configures Predict.
type Options struct {
	Devices []gpu.Device  // the GPUs to plan for: their total memory counts, not their use
	LogDir  string        // where earlier runs recorded durations and learned needs
	Guess   time.Duration // the duration of a task no earlier run recorded; 0: such a task is an error
	// HostLimit is the container's memory limit that memory: needs are packed into (0: host
	// needs are not modelled).
	HostLimit uint64
	// ReleaseLag is how long a trial's GPU memory stays in use after it ended, as a driver
	// takes a while to free an exited process's memory (ReleaseLag); 0: freed at once.
	ReleaseLag time.Duration
	// Compute is how trials sharing a GPU slow each other (compute.go); the zero
	// value: they do not.
	Compute Compute
}

// ReleaseLag is about how long a driver took to free a trial's memory after its process
// exited, on an H100 80GB (driver 580): trials waiting for that memory start that much later.
const ReleaseLag = time.Second

// Prediction is what a run of a plan would do on the given devices, by Predict.
type Prediction struct {
	Devices   []gpu.Device
	Slots     []Slot        // every task, in start order
	Makespan  time.Duration // from the first start to the last end
	Peak      []uint64      // the most memory needed at once on each device
	Notes     []string      // what the prediction assumed
	HostLimit uint64        // Options.HostLimit: 0 when host needs are not modelled
	HostPeak  uint64        // the most host memory needed at once
}

// Slot is one task in a Prediction.
type Slot struct {
	Task       *plan.Task
	Devices    []int // the devices it holds; none for a task without GPU needs
	Need       uint64
	HostNeed   uint64 // its memory: need, when host needs are modelled
	Start, End time.Duration
	Guessed    bool // no earlier run recorded its duration: Guess stands in
}

// Predict predicts a run of p: setup steps one after another, each parallel block's trials
// offered in the block's order and started as runall's admission would, from their declared
// (or learned) needs and the durations earlier runs recorded. It is the admission policy
// alone, with no overhead and exact durations, and each trial's memory given back
// o.ReleaseLag after its end, trials sharing a GPU slowed as o.Compute says; the memory a
// trial reaches over time, others' use of the devices and out-of-memory requeues are not
// modelled.
func Predict(p *plan.Plan, o Options) (*Prediction, error) {
	hist := history.Load(o.LogDir, p)
	o.Compute = isolatedCompute(o.Compute, p, len(o.Devices))
	s := &simulation{plan: p, opts: o, hist: hist, pred: &Prediction{Devices: o.Devices, Peak: make([]uint64, len(o.Devices))}}
	for _, d := range o.Devices {
		s.usable = append(s.usable, d.Total-min(d.Total, p.Config.GPUMemoryMargin.For(d.Total)))
	}
	if o.HostLimit > 0 && p.NeedsHost() {
		s.pred.HostLimit = o.HostLimit
		s.hostUsable = o.HostLimit - min(o.HostLimit, p.Config.HostMemoryMargin.For(o.HostLimit))
	}
	if p.NeedsGPU() {
		s.note(o.Compute.note())
	}
	if note := isolationNote(p); note != "" {
		s.note(note)
	}
	for _, t := range p.Tasks {
		if err := s.task(t); err != nil {
			return nil, err
		}
	}
	s.pred.Makespan = s.now
	return s.pred, nil
}

type simulation struct {
	plan   *plan.Plan
	opts   Options
	hist   *history.History
	pred   *Prediction
	usable []uint64
	now    time.Duration
	// hostUsable is the container's limit less the margin; 0 when host needs are not modelled.
	hostUsable uint64
	noted      map[string]bool
}

func (s *simulation) note(msg string) {
	if s.noted == nil {
		s.noted = map[string]bool{}
	}
	if !s.noted[msg] {
		s.noted[msg] = true
		s.pred.Notes = append(s.pred.Notes, msg)
	}
}

// task simulates a top-level task: a command that runs alone, or a block.
func (s *simulation) task(t *plan.Task) error {
	if t.IsBlock() {
		return s.block(t)
	}
	slot, err := s.slot(t)
	if err != nil {
		return err
	}
	if slot.Need > 0 {
		slot.Devices = []int{0}
		s.pred.Peak[0] = max(s.pred.Peak[0], slot.Need)
	}
	s.pred.HostPeak = max(s.pred.HostPeak, slot.HostNeed)
	slot.Start, slot.End = s.now, s.now+slot.End
	s.now = slot.End
	s.pred.Slots = append(s.pred.Slots, slot)
	return nil
}

// slot is a task's need and duration (in End), before it is placed.
func (s *simulation) slot(t *plan.Task) (Slot, error) {
	slot := Slot{Task: t}
	d, ok := order.Duration(s.hist, t)
	if !ok {
		if s.opts.Guess <= 0 {
			return slot, fmt.Errorf("%s: no earlier run of this file recorded how long %q takes: pass --duration (a guess for such tasks), or simulate after a run", t.Pos, t.Name)
		}
		d, slot.Guessed = s.opts.Guess, true
		s.note(fmt.Sprintf("* no earlier run recorded this task's duration: guessed at %s (--duration)", s.opts.Guess))
	}
	slot.End = d
	hostNeed, err := hostNeed(t, s.hist, s.opts.HostLimit, s.hostUsable, s.note)
	if err != nil {
		return slot, err
	}
	slot.HostNeed = hostNeed
	if t.GPU == nil {
		return slot, nil
	}
	slot.Need = t.GPU.Memory
	if t.GPU.Auto {
		need, learned := s.hist.GPU().Learned(t.Group)
		if !learned {
			need = slices.Max(s.usable)
			s.note("gpu-memory: auto groups that never ran are taken to fill a device (their first trial learns the need)")
		}
		slot.Need = need
	}
	if slot.Need > slices.Max(s.usable) {
		return slot, fmt.Errorf("%s: %q needs %s, more than any device has after the margin", t.Pos, t.Name, size.Format(slot.Need))
	}
	return slot, nil
}

// ending is a running trial in the block simulation, by its end.
type ending struct {
	at   time.Duration
	slot int // index in pred.Slots
}

type endings []ending

func (e endings) Len() int           { return len(e) }
func (e endings) Less(i, j int) bool { return e[i].at < e[j].at }
func (e endings) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *endings) Push(x any)        { *e = append(*e, x.(ending)) }
func (e *endings) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// block simulates a parallel block as runBlock and admitFrom run it: trials offered in the
// block's order through the same waiting line (each overtaken at most max-parallel-commands
// times), best fit.
func (s *simulation) block(b *plan.Task) error {
	slots, err := s.blockSlots(b)
	if err != nil {
		return err
	}
	limit := max(s.plan.Config.MaxParallel, 1)
	line := sched.NewLine(seq(len(slots)), limit)
	free, used := slices.Clone(s.usable), make([]uint64, len(s.usable))
	host := newHostRoom(s.hostUsable)
	var running, freeing endings // by their end; ended trials whose memory is still in use, by when it is given back
	last, pace := time.Duration(0), newPace(s.opts.Compute)
	for line.Len() > 0 || len(running) > 0 || len(freeing) > 0 {
		line.Admit(func(i int) sched.Tried {
			if len(running) >= limit {
				return sched.Full
			}
			devs := s.fit(slots[i], free)
			if devs == nil || !host.fits(slots[i].HostNeed) {
				return sched.Waits
			}
			slot := slots[i]
			s.pred.HostPeak = max(s.pred.HostPeak, host.take(slot.HostNeed))
			slot.Devices, slot.Start, slot.End = devs, s.now, s.now+slot.End
			for _, d := range devs {
				free[d] -= slot.Need
				used[d] += slot.Need
				s.pred.Peak[d] = max(s.pred.Peak[d], used[d])
			}
			s.pred.Slots = append(s.pred.Slots, slot)
			heap.Push(&running, ending{slot.End, len(s.pred.Slots) - 1})
			return sched.Started
		})
		pace.reshape(&running, s.pred.Slots, s.now)
		if len(running) == 0 && len(freeing) == 0 && line.Len() == 0 {
			break
		}
		if len(running) == 0 && len(freeing) == 0 {
			first := slots[line.Drain()[0]].Task
			return fmt.Errorf("%s: %q never fits beside the rest of its block", first.Pos, first.Name)
		}
		if len(freeing) > 0 && (len(running) == 0 || freeing[0].at <= running[0].at) {
			e := heap.Pop(&freeing).(ending)
			s.now = max(s.now, e.at)
			done := s.pred.Slots[e.slot]
			for _, d := range done.Devices {
				free[d] += done.Need
				used[d] -= done.Need
			}
			continue
		}
		e := heap.Pop(&running).(ending)
		host.give(s.pred.Slots[e.slot].HostNeed) // host memory is back when the process exits
		s.now, last = e.at, max(last, e.at)
		heap.Push(&freeing, ending{e.at + s.opts.ReleaseLag, e.slot})
	}
	if len(slots) > 0 {
		s.now = last // the block ends with its last trial, not with its memory
	}
	return nil
}

// blockSlots is a block's trials as the simulation places them, in the block's order.
func (s *simulation) blockSlots(b *plan.Task) ([]Slot, error) {
	var slots []Slot
	for _, t := range order.Trials(b, b.Parallel, s.hist) {
		slot, err := s.slot(t)
		if err != nil {
			return nil, err
		}
		slots = append(slots, slot)
	}
	return slots, nil
}

// seq is 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// fit is the devices slot would start on now, by the admitter's rule (admit.BestFit), or
// nil when it does not fit. A trial without GPU needs fits anywhere.
func (s *simulation) fit(slot Slot, free []uint64) []int {
	if slot.Task.GPU == nil {
		return []int{}
	}
	var fits []admit.Room
	for d, f := range free {
		if f >= slot.Need {
			fits = append(fits, admit.Room{Device: d, Avail: f})
		}
	}
	return admit.BestFit(fits, max(slot.Task.GPU.Devices, 1))
}
