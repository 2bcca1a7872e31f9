package runner

import (
	"context"
	"strings"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/framework"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

// gpuRun is what the GPU resource knows of the run: its plan and history (learned needs),
// and what a trial's frameworks are told of its GPU room (a torch probe, once a run).
type gpuRun struct {
	plan *plan.Plan
	hist *history.History
	fw   *framework.Framework
}

// openGPUResource is the GPU resource of the admitter's GPUs: MPS as the plan's
// gpu-isolation asks, the health watch, and gpu-sharing: progress pausing through pause.
func openGPUResource(p *plan.Plan, opts Options, a *admit.Admitter, hist *history.History, pause *pauser, closed *admit.Closed) (*gpuResource, error) {
	g := &gpuResource{admit: a, gpus: gpuRun{plan: p, hist: hist, fw: &framework.Framework{}}}
	iso, note, err := openIsolation(p, opts, g, closed)
	if err != nil {
		return nil, err
	}
	g.iso, g.isoNote = iso, note
	g.health = newHealthWatch(opts.Resources.Probe, closed)
	g.share = newGPUSharing(p, hist, pause, &g.rooms, iso != nil, closed.Wake) // under MPS kernels overlap
	return g, nil
}

// Rooms are tr's MPS room (first: a fault's bystander goes back to the line first) and its
// GPU room, which is the trial's while its command runs; none when tr has no placement.
func (g *gpuResource) Rooms(tr *sched.Trial, run *plan.Task) resource.Rooms {
	p := g.held.get(tr)
	if p == nil {
		return resource.Rooms{}
	}
	var rs resource.Rooms
	if g.iso != nil {
		rs.First = []trial.Room{trial.NewMPSRoom(g.iso, p, run.GPU.Threads)}
	}
	room := trial.NewGPURoom(g.admit, p, run, g.gpus.fw)
	g.rooms.put(tr, room) // a step's command: its room is the trial's while it runs
	rs.Rest = []trial.Room{room}
	return rs
}

// Consumer is gpu-sharing: progress; nil when every trial shares by memory.
func (g *gpuResource) Consumer() event.Consumer {
	if g.share == nil {
		return nil
	}
	return g.share
}

// Open says what gpu-isolation says, starts MPS and the health watch (which reads once
// before the first trial is placed); close stops them, MPS's daemons last.
func (g *gpuResource) Open(say func(string)) (close func()) {
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
func (g *gpuResource) Start(ctx context.Context, run resource.Run) (stop func()) {
	w := run.Watch()
	g.admit.Start(ctx, func(s admit.Sample) {
		w.Sample(s)
		g.share.sampled(s)
	})
	return g.admit.Stop
}

// Record adds the learned GPU needs, the GPU processes and gpu-sharing's figures.
func (g *gpuResource) Record(res *results.Run) {
	res.LearnedGPUMemory = learnedByName(g.gpus.plan, g.gpus.hist)
	res.GPUProcessIDs = g.admit.PIDs().String()
	res.GPUSharing = g.share.results()
}

// Ended keeps what gpu-sharing learned in the history.
func (g *gpuResource) Ended() { g.share.remember() }
