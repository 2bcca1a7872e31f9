// Package gpures is the run's GPU resource: admission by GPU memory (runner/admit), MPS
// isolation (gpu-isolation), gpu-sharing: progress, the health watch that takes a faulty GPU
// out of service and what becomes of the trials on it (health_trials.go), on-oom's halving
// (oomhalve.go), a hung trial's GPU hold, and each trial's GPU rooms (GPU memory, MPS, health,
// on-oom). The run holds it as one resource.Resource in its list, and knows nothing else of
// it.
package gpures

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/framework"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/needs"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

// Options are what the GPU resource is made of.
type Options struct {
	Plan     *plan.Plan
	Probe    gpu.Probe // the GPUs; nil: none could be opened (ProbeErr says why)
	ProbeErr error
	NoGPU    bool     // --no-gpu: no admission by GPU memory
	Environ  []string // runall's environment (MPS's daemons start from it)
	Hist     *history.History
	// Pause resumes a trial gpu-sharing: progress paused, or one paused off a GPU taken out
	// of service; nil: no trial has checkpoint:.
	Pause Pauser
	// Fail halts the run, failed, saying why: every GPU is out of service.
	Fail func(why string)
	Met  *prom.Metrics // runall_gpu_out_of_service; nil without --serve
	// Drop drops a trial's kept copy when on-oom halved its param; nil: no trial keeps one.
	Drop Dropper
}

// Pauser resumes a paused trial once its pause is back in its source (the run's pauser).
type Pauser interface {
	ResumeWhenBack(t *plan.Task)
}

// Resource admits trials by their GPU memory, through the admitter; tasks that ask for
// none pass.
type Resource struct {
	admit *admit.Admitter
	held  resource.Held[*admit.Placement]
	iso   *isolation // MPS (gpu-isolation); nil without
	// health takes a faulty GPU out of service (health.go), and its trials watch their GPUs
	// through it (health_trials.go); nil without a probe.
	health *healthWatch
	halve  *oomHalving    // on-oom (oomhalve.go); nil when no trial sets it
	hold   *admit.Release // a hung trial's GPUs held out of admission (runner/hang)
	// isoNote is what gpu-isolation says as the run starts (why it runs without, under auto).
	isoNote string
	share   *gpuSharing // gpu-sharing: progress; nil when every trial shares by memory
	// rooms are the GPU rooms of the trials placed, each its running command's: the room
	// gpu-sharing: progress asks for a trial's pause.
	rooms resource.Held[*GPURoom]
	gpus  gpuRun // what it knows of the run: the plan, its history, the frameworks
}

// Check says why the GPU resource cannot open: a task asks for GPU memory, no --no-gpu, and
// no GPU could be probed. The run asks it before it makes anything else.
func Check(o Options) error {
	p := o.Plan
	if !p.NeedsGPU() || o.NoGPU || o.Probe != nil {
		return nil
	}
	t := p.FirstGPUTask()
	cause := o.ProbeErr
	if cause == nil {
		cause = errors.New("no GPU probe")
	}
	return fmt.Errorf("%s: task %q asks for GPU memory, but %w\n"+
		"run with --no-gpu to run these tasks with max-parallel-commands as the only limit, "+
		"or --fake-gpus 32GiB,32GiB to simulate GPUs", t.Pos, t.Name, cause)
}

// Open is the GPU resource when a task asks for GPU memory; nil otherwise, or with --no-gpu.
// It opens MPS as the plan's gpu-isolation asks, the health watch, and gpu-sharing: progress.
func Open(o Options) (*Resource, error) {
	p := o.Plan
	if err := Check(o); err != nil || !p.NeedsGPU() || o.NoGPU {
		return nil, err
	}
	closed := &admit.Closed{} // GPUs whose MPS server restarts (isolation.go), or out of service (health.go)
	m := p.Config.GPUMemoryMargin
	a := admit.New(admit.Options{Probe: o.Probe, Margin: admit.Margin{Bytes: m.Bytes, Fraction: m.Fraction},
		OOMRetries: p.Config.OOMRetries, History: o.Hist.GPU(), Closed: closed, Busy: wantsProgressSharing(p)})
	g := &Resource{admit: a, gpus: gpuRun{plan: p, hist: o.Hist, fw: &framework.Framework{}}}
	iso, note, err := openIsolation(p, o, g, closed)
	if err != nil {
		return nil, err
	}
	g.iso, g.isoNote = iso, note
	g.health = newHealthWatch(o.Probe, closed)
	newHealthTrials(g.health, o.Pause, closed, o.Fail, o.Met)
	g.halve = newOOMHalving(p, a, o.Drop)
	g.hold = admit.ReleaseOf(a)
	g.share = newGPUSharing(p, o.Hist, o.Pause, &g.rooms, iso != nil, closed.Wake) // under MPS kernels overlap
	return g, nil
}

// Admit places tr on a device with room for its need.
func (g *Resource) Admit(tr *sched.Trial) (bool, string, error) {
	if tr.Task.GPU == nil {
		return true, "", nil
	}
	req := Request(tr.Task)
	req.Gate = g.share.gate(tr.Task)
	p, reason, err := g.admit.Place(req)
	if err != nil || p == nil {
		return false, reason, err
	}
	g.held.Put(tr, p)
	g.share.placed(tr, p)
	return true, "", nil
}

// Release frees tr's placement.
func (g *Resource) Release(tr *sched.Trial) {
	if p, ok := g.held.Take(tr); ok {
		g.rooms.Take(tr)
		g.admit.Release(p)
		g.share.left(tr)
	}
}

// placed is how many trials hold a placement on device dev.
func (g *Resource) placed(dev int) int {
	return g.held.Count(func(p *admit.Placement) bool { return slices.Contains(p.Devices, dev) })
}

// Changed is closed when the devices' memory or the reservations changed.
func (g *Resource) Changed() <-chan struct{} { return g.admit.Changed() }

// Request is what a task asks of the GPUs, in the admitter's terms.
func Request(t *plan.Task) admit.Request {
	return admit.Request{Request: needs.Request{ID: t.ID, Name: t.Name, Group: t.Group, Memory: t.GPU.Memory, Auto: t.GPU.Auto}, Devices: t.GPU.Devices}
}

// gpuRun is what the GPU resource knows of the run: its plan and history (learned needs),
// and what a trial's frameworks are told of its GPU room (a torch probe, once a run).
type gpuRun struct {
	plan *plan.Plan
	hist *history.History
	fw   *framework.Framework
}

// Rooms are tr's health room and MPS room (first: a GPU fault decides before the rest, and
// an MPS fault's bystander goes back to the line first) and its GPU room, which is the
// trial's while its command runs (with on-oom, inside its halving room); none when tr has
// no placement.
func (g *Resource) Rooms(tr *sched.Trial, run *plan.Task) resource.Rooms {
	p := g.held.Get(tr)
	if p == nil {
		return resource.Rooms{}
	}
	var rs resource.Rooms
	if h := g.healthTrials(); h != nil {
		rs.First = append(rs.First, newHealthRoom(h, p, tr.Task)) // a GPU fault decides before the rest
	}
	if g.iso != nil {
		rs.First = append(rs.First, NewMPSRoom(g.iso, p, run.GPU.Threads))
	}
	room := NewGPURoom(g.admit, p, run, g.gpus.fw)
	g.rooms.Put(tr, room) // a step's command: its room is the trial's while it runs
	rs.Rest = []trial.Room{room}
	if g.halve != nil {
		rs.Rest = []trial.Room{newHalvingRoom(room, g.halve, tr.Task, run)}
	}
	return rs
}

// Consumer is, in this order, gpu-sharing: progress (nil when every trial shares by
// memory), on-oom (it notes the value each attempt of an on-oom trial runs with) and the
// health watch's trials (it resumes the trials paused off a GPU out of service); nil when
// none is.
func (g *Resource) Consumer() event.Consumer {
	var each consumers
	if g.share != nil {
		each = append(each, g.share)
	}
	if g.halve != nil {
		each = append(each, g.halve)
	}
	if h := g.healthTrials(); h != nil {
		each = append(each, h)
	}
	switch len(each) {
	case 0:
		return nil
	case 1:
		return each[0]
	}
	return each
}

// consumers are the GPU resource's consumers, told each event in their order.
type consumers []event.Consumer

func (cs consumers) Event(ev event.Event, emit func(event.Event)) {
	for _, c := range cs {
		c.Event(ev, emit)
	}
}

// healthTrials is the GPUs' health as the trials' rooms ask it; nil without a watch.
func (g *Resource) healthTrials() *healthTrials {
	if g.health == nil {
		return nil
	}
	return g.health.trials
}

// Variant is what a trial runs as: as inner makes it (pbt's values; nil: as written), with
// its on-oom param halved where on-oom halved it (resource.Varier).
func (g *Resource) Variant(inner trial.Variant) trial.Variant {
	if g.halve == nil {
		return inner
	}
	return g.halve.variant(inner)
}

// HoldUntilGone holds a hung trial's GPUs out of admission until its processes left them
// and their memory came back (runner/hang's Holder; admit.Release).
func (g *Resource) HoldUntilGone(uuids []string, pids []int, wait time.Duration, who string, say func(string)) {
	g.hold.HoldUntilGone(uuids, pids, wait, who, say)
}

// Open says what gpu-isolation says, starts MPS and the health watch (which reads once
// before the first trial is placed); close stops them, MPS's daemons last.
func (g *Resource) Open(say func(string)) (close func()) {
	if g.isoNote != "" {
		for _, line := range strings.Split(strings.TrimSpace(g.isoNote), "\n") {
			say(line)
		}
	}
	if g.iso != nil {
		g.iso.start(say)
	}
	g.health.start(say)
	return func() {
		g.health.close()
		if g.iso != nil {
			g.iso.close()
		}
	}
}

// Start samples the GPUs for the report's watch and gpu-sharing; its samples hold the
// container's memory.
func (g *Resource) Start(ctx context.Context, run resource.Run) (stop func()) {
	w := run.Watch()
	g.admit.Start(ctx, func(s admit.Sample) {
		w.Sample(s)
		g.share.sampled(s)
	})
	return g.admit.Stop
}

// Record adds the learned GPU needs, the GPU processes, gpu-sharing's figures, each GPU's
// health, and the params each on-oom trial ended with.
func (g *Resource) Record(res *results.Run) {
	res.LearnedGPUMemory = Learned(g.gpus.plan, g.gpus.hist)
	res.GPUProcessIDs = g.admit.PIDs().String()
	res.GPUSharing = g.share.results()
	res.GPUs = g.healthTrials().results()
	g.halve.results(res.Tasks)
}

// Ended keeps what gpu-sharing learned in the history.
func (g *Resource) Ended() { g.share.remember() }
