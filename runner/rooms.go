package runner

import (
	"slices"
	"sync"

	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/framework"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

// rooms are the resources trials are admitted by, as the scheduler asks them: host memory
// first, then the GPUs. Each keeps the room it reserved for a trial until the trial
// releases it; the launcher reads a running trial's rooms from here, and every command
// the container's memory (its OOM kills).
type rooms struct {
	host *hostResource        // nil when no task sets memory:
	gpu  *gpuResource         // nil when no task asks for GPU memory (or --no-gpu)
	mem  *hostMemory          // the container's memory, and its admitter when a task sets memory:
	fw   *framework.Framework // what a trial's frameworks are told of its GPU room (a torch probe, once a run)
}

// newRooms are the rooms of the GPU admitter (nil: not admitted by) and of the container's
// memory (its admitter nil: not admitted by).
func newRooms(gpu *admit.Admitter, mem *hostMemory) rooms {
	r := rooms{mem: mem, fw: &framework.Framework{}}
	if gpu != nil {
		r.gpu = &gpuResource{admit: gpu}
	}
	if mem.admit != nil {
		r.host = &hostResource{admit: mem.admit}
	}
	return r
}

// resources is the rooms in the order admission asks them.
func (r rooms) resources() []sched.Resource {
	var out []sched.Resource
	if r.host != nil {
		out = append(out, r.host)
	}
	if r.gpu != nil {
		out = append(out, r.gpu)
	}
	return out
}

// placement is tr's GPU room; nil without one.
func (r rooms) placement(tr *sched.Trial) *admit.Placement {
	if r.gpu == nil {
		return nil
	}
	return r.gpu.held.get(tr)
}

// hostPlacement is tr's room in host memory; nil without one.
func (r rooms) hostPlacement(tr *sched.Trial) *hostadmit.Placement {
	if r.host == nil {
		return nil
	}
	return r.host.held.get(tr)
}

// held is what a resource reserved for each trial it admitted, until the trial releases it.
type held[P any] struct {
	mu sync.Mutex
	m  map[*sched.Trial]P
}

func (h *held[P]) put(tr *sched.Trial, p P) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[*sched.Trial]P{}
	}
	h.m[tr] = p
}

func (h *held[P]) get(tr *sched.Trial) P {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[tr]
}

// take removes and returns tr's reservation; ok is false when there was none.
func (h *held[P]) take(tr *sched.Trial) (p P, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok = h.m[tr]
	delete(h.m, tr)
	return p, ok
}

// gpuResource admits trials by their GPU memory, through the admitter; tasks that ask for
// none pass.
type gpuResource struct {
	admit *admit.Admitter
	held  held[*admit.Placement]
	iso   *isolation // MPS (gpu-isolation); nil without
	// health takes a faulty GPU out of service (health.go); nil without a probe.
	health *healthWatch
	// isoNote is what gpu-isolation says as the run starts (why it runs without, under auto).
	isoNote string
	share   *gpuSharing // gpu-sharing: progress; nil when every trial shares by memory
	// rooms are the GPU rooms of the trials placed, each its running command's: the room
	// gpu-sharing: progress asks for a trial's pause.
	rooms held[*trial.GPURoom]
}

// Admit places tr on a device with room for its need.
func (g *gpuResource) Admit(tr *sched.Trial) (bool, string, error) {
	if tr.Task.GPU == nil {
		return true, "", nil
	}
	req := gpuRequest(tr.Task)
	req.Gate = g.share.gate(tr.Task)
	p, reason, err := g.admit.Place(req)
	if err != nil || p == nil {
		return false, reason, err
	}
	g.held.put(tr, p)
	g.share.placed(tr, p)
	return true, "", nil
}

// Release frees tr's placement.
func (g *gpuResource) Release(tr *sched.Trial) {
	if p, ok := g.held.take(tr); ok {
		g.rooms.take(tr)
		g.admit.Release(p)
		g.share.left(tr)
	}
}

// placed is how many trials hold a placement on device dev.
func (g *gpuResource) placed(dev int) int {
	g.held.mu.Lock()
	defer g.held.mu.Unlock()
	n := 0
	for _, p := range g.held.m {
		if slices.Contains(p.Devices, dev) {
			n++
		}
	}
	return n
}

// isolation is the GPUs' MPS; nil without it (or without GPU admission).
func (g *gpuResource) isolation() *isolation {
	if g == nil {
		return nil
	}
	return g.iso
}

// Changed is closed when the devices' memory or the reservations changed.
func (g *gpuResource) Changed() <-chan struct{} { return g.admit.Changed() }

// gpuRequest is what a task asks of the GPUs, in the admitter's terms.
func gpuRequest(t *plan.Task) admit.Request {
	return admit.Request{ID: t.ID, Name: t.Name, Group: t.Group, Memory: t.GPU.Memory, Auto: t.GPU.Auto, Devices: t.GPU.Devices}
}

// hostResource admits trials by the container's host memory, through the host admitter;
// tasks that set no memory: pass.
type hostResource struct {
	admit *hostadmit.Admitter
	held  held[*hostadmit.Placement]
}

// Admit reserves room in the container's memory for tr's host need.
func (h *hostResource) Admit(tr *sched.Trial) (bool, string, error) {
	spec := tr.Task.Host
	if spec == nil {
		return true, "", nil
	}
	p, reason, err := h.admit.Place(hostadmit.Request{
		ID: tr.Task.ID, Name: tr.Task.Name, Group: spec.Group, Memory: spec.Memory, Auto: spec.Auto,
	})
	if err != nil || p == nil {
		return false, reason, err
	}
	h.held.put(tr, p)
	return true, "", nil
}

// Release frees tr's room.
func (h *hostResource) Release(tr *sched.Trial) {
	if p, ok := h.held.take(tr); ok {
		h.admit.Release(p)
	}
}

// Changed is closed when the container's memory was measured again, or a trial released.
func (h *hostResource) Changed() <-chan struct{} { return h.admit.Changed() }
