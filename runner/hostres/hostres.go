// Package hostres is the run's host-memory resource: admission by the container's memory
// (runner/hostadmit), the OOM kills it recognises, each command's room in it, and what it
// records. The run holds it as one resource.Resource in its list, and knows nothing else of it.
package hostres

import (
	"cmp"
	"context"

	"github.com/runall/runall/hostmem"

	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/results"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

// Resource is the container's memory as the run sees it, its resource.Resource: its OOM
// kills, which tell an outside SIGKILL's cause, and the admitter of trials by memory: (nil
// when no task sets it; tasks that set none pass).
type Resource struct {
	mem   hostadmit.Reader
	admit *hostadmit.Admitter
	held  resource.Held[*hostadmit.Placement]
	hist  *history.History // where learned needs are kept
	plan  *plan.Plan
	// container: its samples are the report's of the container's memory (a run without
	// GPUs: theirs hold the container's otherwise).
	container bool
}

// Open is the container's memory mem, and makes the host memory admitter when a task sets
// memory:. container: its samples are the report's (no GPU samples hold its memory).
func Open(p *plan.Plan, mem hostadmit.Reader, hist *history.History, container bool) *Resource {
	h := &Resource{mem: mem, hist: hist, plan: p, container: container}
	if p.NeedsHost() {
		h.admit = hostadmit.New(hostadmit.Options{Memory: mem, Margin: p.Config.HostMemoryMargin.For,
			OOMRetries: p.Config.OOMRetries, Needs: hist.Host()})
	}
	return h
}

// Admit reserves room in the container's memory for tr's host need.
func (h *Resource) Admit(tr *sched.Trial) (bool, string, error) {
	spec := tr.Task.Host
	if spec == nil || h.admit == nil {
		return true, "", nil
	}
	p, reason, err := h.admit.Place(hostadmit.Request{
		ID: tr.Task.ID, Name: tr.Task.Name, Group: spec.Group, Memory: spec.Memory, Auto: spec.Auto,
	})
	if err != nil || p == nil {
		return false, reason, err
	}
	h.held.Put(tr, p)
	return true, "", nil
}

// Release frees tr's room.
func (h *Resource) Release(tr *sched.Trial) {
	if p, ok := h.held.Take(tr); ok {
		h.admit.Release(p)
	}
}

// Changed is closed when the container's memory was measured again, or a trial released;
// nil without admission.
func (h *Resource) Changed() <-chan struct{} {
	if h.admit == nil {
		return nil
	}
	return h.admit.Changed()
}

// Rooms is tr's room in the container's memory: every command has one, which tells an
// outside SIGKILL's cause whether or not it set memory:.
func (h *Resource) Rooms(tr *sched.Trial, _ *plan.Task) resource.Rooms {
	return resource.Rooms{Rest: []trial.Room{NewHostRoom(h.mem, h.admit, h.held.Get(tr))}}
}

// Consumer: host memory reads no events.
func (h *Resource) Consumer() event.Consumer { return nil }

// Open: nothing to ready.
func (h *Resource) Open(func(string)) (close func()) { return func() {} }

// Start measures the container's memory and the trials' processes while the run lasts; the
// returned func stops it. A memory that cannot be read is said once: admission by host
// memory is then off.
func (h *Resource) Start(ctx context.Context, run resource.Run) (stop func()) {
	if h.admit == nil {
		return func() {}
	}
	if w := h.admit.Warning(); w != "" {
		run.Say("warning: " + w)
	}
	var onSample func()
	if h.container {
		onSample = run.Watch().SampleContainer
	}
	h.admit.Start(ctx, func([]hostadmit.TrialMemory) {
		if m, ok := h.admit.Memory(); ok {
			run.Met.HostSample(m)
		}
		if onSample != nil {
			onSample()
		}
	})
	return h.admit.Stop
}

// Record adds the learned host needs.
func (h *Resource) Record(res *results.Run) {
	if h.admit != nil {
		res.LearnedHostMemory = h.learnedByName(h.plan)
	}
}

// Ended: nothing to keep.
func (h *Resource) Ended() {}

// learnedByName reports learned host needs by the name of the trial each was measured from
// (as history recorded it; the group's first trial's when none is recorded).
func (h *Resource) learnedByName(p *plan.Plan) map[string]uint64 {
	out := map[string]uint64{}
	seen := map[string]bool{}
	plan.Walk(p.Tasks, func(t *plan.Task) {
		if t.Host == nil || !t.Host.Auto || seen[t.Host.Group] {
			return
		}
		seen[t.Host.Group] = true
		if n, ok := h.hist.Host().Learned(t.Host.Group); ok {
			out[cmp.Or(h.hist.Host().LearnedFrom(t.Host.Group), t.Name)] = n // the trial measured
		}
	})
	return out
}

// Container is the container's memory: mem, or its memory cgroup when nil.
func Container(mem hostadmit.Reader) hostadmit.Reader {
	if mem == nil {
		return hostmem.Open("")
	}
	return mem
}
