package runner

import (
	"slices"
	"sync"

	"github.com/runall/runall/hostmem"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/history"
	"github.com/runall/runall/runner/hostadmit"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/resource"
	"github.com/runall/runall/runner/sched"
	"github.com/runall/runall/runner/trial"
)

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
// none pass. It is the run's resource.Resource of the GPUs (gpu_resource.go).
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
	gpus  gpuRun // what it knows of the run: the plan, its history, the frameworks
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

// Changed is closed when the devices' memory or the reservations changed.
func (g *gpuResource) Changed() <-chan struct{} { return g.admit.Changed() }

// gpuRequest is what a task asks of the GPUs, in the admitter's terms.
func gpuRequest(t *plan.Task) admit.Request {
	return admit.Request{ID: t.ID, Name: t.Name, Group: t.Group, Memory: t.GPU.Memory, Auto: t.GPU.Auto, Devices: t.GPU.Devices}
}

// resourceParts are what the run's resources are made of: the GPU admitter (nil: no GPU
// admission), the container's memory, the history of needs, the pauser gpu-sharing pauses
// through, and the GPUs closed to new trials.
type resourceParts struct {
	gpu    *admit.Admitter
	mem    hostadmit.Reader
	hist   *history.History
	pause  *pauser
	closed *admit.Closed
}

// openResources are the run's resources, in the order admission asks them: host memory
// first (every command has a room in it), then the GPUs when admitted by. A new resource is
// one more entry here.
func openResources(p *plan.Plan, opts Options, parts resourceParts) ([]resource.Resource, error) {
	list := []resource.Resource{openHost(p, parts.mem, parts.hist, parts.gpu == nil)}
	if parts.gpu != nil {
		g, err := openGPUResource(p, opts, parts.gpu, parts.hist, parts.pause, parts.closed)
		if err != nil {
			return nil, err
		}
		list = append(list, g)
	}
	return list, nil
}

// containerMemory is the container's memory: mem, or its memory cgroup when nil.
func containerMemory(mem hostadmit.Reader) hostadmit.Reader {
	if mem == nil {
		return hostmem.Open("")
	}
	return mem
}
