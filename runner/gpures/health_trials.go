package gpures

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/runall/runall/gpu"
	"github.com/runall/runall/runner/admit"
	"github.com/runall/runall/runner/event"
	"github.com/runall/runall/runner/plan"
	"github.com/runall/runall/runner/prom"
	"github.com/runall/runall/runner/results"
)

// maxGPUFaulted is how often a trial goes back to the line after a fault of its GPU, not
// counted against its retries: as often as an MPS fault's bystander (maxBystander).
const maxGPUFaulted = 3

// healthTrials is the trials' side of the health watch (health.go): the health rooms of the
// running trials (room_health.go) watch their GPUs through it, and are told when one
// is taken out of service; it resumes the trials they paused (a consumer of the stream),
// counts their requeues, and halts the run once every GPU is out of service.
type healthTrials struct {
	watch  *healthWatch
	pause  Pauser // nil when no trial has checkpoint: (nothing can pause)
	closed *admit.Closed
	fail   func(why string) // halts the run, failed, with why (Options.Fail); nil: none
	met    *prom.Metrics    // runall_gpu_out_of_service; nil without --serve

	mu       sync.Mutex
	watchers map[int]healthWatcher
	nextID   int
	out      map[int]OutOfService // the GPUs taken out of service, by what
	requeues map[int]int          // task ID → its requeues after a GPU fault
	paused   map[*plan.Task]bool
	gpus     map[int][]results.GPUFault // each fault seen, by GPU, for results.json
}

// healthWatcher is one running attempt's watch on its GPUs.
type healthWatcher struct {
	devs []int
	out  func(OutOfService)
}

// newHealthTrials is the trials' side of watch; nil without one.
func newHealthTrials(watch *healthWatch, pause Pauser, closed *admit.Closed, fail func(string), met *prom.Metrics) *healthTrials {
	if watch == nil {
		return nil
	}
	h := &healthTrials{watch: watch, pause: pause, closed: closed, fail: fail, met: met, watchers: map[int]healthWatcher{},
		out: map[int]OutOfService{}, requeues: map[int]int{}, paused: map[*plan.Task]bool{}, gpus: map[int][]results.GPUFault{}}
	watch.trials = h
	return h
}

// seen is told by the watch of each fault it saw on dev (one of devices), come after since:
// it is recorded for results.json, and one that takes the GPU out of service is acted on
// (taken).
func (h *healthTrials) seen(dev, devices int, f gpu.Fault, since time.Time) {
	if h == nil {
		return
	}
	rec := results.GPUFault{Fault: f.String(), Kind: string(f.Kind), Xid: f.Xid, Resolution: f.Resolution().String(),
		Seen: time.Now(), Action: "recorded"}
	if f.OutOfService() {
		rec.Action = results.GPUHealthOutOfService
	}
	h.mu.Lock()
	h.gpus[dev] = append(h.gpus[dev], rec)
	h.mu.Unlock()
	if f.OutOfService() {
		h.met.GPUOutOfService(dev)
		h.taken(devices, OutOfService{Dev: dev, Fault: f, Since: since})
	}
}

// results is each watched GPU's health, for results.json; nil without a watch.
func (h *healthTrials) results() []results.GPU {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]results.GPU, len(h.watch.said))
	for i := range out {
		out[i] = results.GPU{GPU: i, Health: results.GPUHealthOK, Faults: slices.Clone(h.gpus[i])}
		switch _, gone := h.out[i]; {
		case gone:
			out[i].Health = results.GPUHealthOutOfService
		case len(out[i].Faults) > 0:
			out[i].Health = results.GPUHealthRecorded
		}
	}
	return out
}

// taken is told by the watch that dev went out of service for f: the attempts on it are
// told, and once every GPU is out, the run halts, failed, saying so; the trials' checkpoints
// stay kept for a run on healthy GPUs to resume.
func (h *healthTrials) taken(devices int, o OutOfService) {
	dev := o.Dev
	h.mu.Lock()
	h.out[dev] = o
	var tell []func(OutOfService)
	for _, w := range h.watchers {
		if slices.Contains(w.devs, dev) {
			tell = append(tell, w.out)
		}
	}
	all := len(h.out) >= devices
	why := h.allOut()
	h.mu.Unlock()
	for _, out := range tell {
		out(o)
	}
	if all {
		if h.fail != nil {
			h.fail(why)
		}
		h.closed.Wake() // the trials that wait for room are skipped
	}
}

// allOut says that every GPU is out of service, and by what.
func (h *healthTrials) allOut() string {
	var each []string
	for dev := 0; len(each) < len(h.out); dev++ {
		if o, ok := h.out[dev]; ok {
			each = append(each, fmt.Sprintf("GPU%d: %s", dev, o.Fault))
		}
	}
	return "every GPU is out of service (" + strings.Join(each, "; ") +
		"); the trials' checkpoints are kept: run again on healthy GPUs to resume them"
}

// Out is the first of devs out of service, its health read now.
func (h *healthTrials) Out(devs []int) (OutOfService, bool) {
	h.watch.check()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range devs {
		if o, ok := h.out[d]; ok {
			return o, true
		}
	}
	return OutOfService{}, false
}

// Watch tells out when one of devs goes out of service, until cancel.
func (h *healthTrials) Watch(devs []int, out func(OutOfService)) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.nextID
	h.nextID++
	h.watchers[id] = healthWatcher{devs: slices.Clone(devs), out: out}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.watchers, id)
	}
}

// Paused keeps that a room asked t's pause: it is resumed as its pause ends (Event).
func (h *healthTrials) Paused(t *plan.Task) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.paused[t] = true
}

// RequeueFaulted reports whether the task may go back to the line once more after a fault
// of its GPU, and counts it.
func (h *healthTrials) RequeueFaulted(id int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.requeues[id] >= maxGPUFaulted {
		return false
	}
	h.requeues[id]++
	return true
}

// Event resumes a trial a room paused off a GPU out of service, as its pause ends: it
// waits in line for a GPU in service.
func (h *healthTrials) Event(ev event.Event, _ func(event.Event)) {
	if ev.Kind != event.TaskEnded || ev.End != event.EndPause {
		return
	}
	h.mu.Lock()
	asked := h.paused[ev.Task]
	delete(h.paused, ev.Task)
	h.mu.Unlock()
	if asked && h.pause != nil {
		h.pause.ResumeWhenBack(ev.Task)
	}
}
